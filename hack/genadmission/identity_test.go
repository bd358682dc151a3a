package main

import (
	"testing"

	"github.com/kubenats/kubenats/test/rbac"
)

// The policy binds by user name: it must be the ServiceAccount config/rbac
// installs, or it would confine nobody (the careless variant: the policy
// names a ServiceAccount nobody runs as, and every write passes).
func TestOperatorUserIsTheInstalledServiceAccount(t *testing.T) {
	if operatorUser != rbac.User {
		t.Fatalf("the policy binds %q, config/rbac installs %q", operatorUser, rbac.User)
	}
}
