package accounts

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestAdmits: which namespaces may attach accounts to a cluster. Careless
// variants caught: a cluster in mode users taking accounts (the own-
// namespace row), a missing spec.auth.accounts read as "everyone", a
// selector that does not match read as a match.
func TestAdmits(t *testing.T) {
	jwtCluster := func(from *v1alpha1.AccountsFrom) *v1alpha1.NatsCluster {
		c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "platform", Name: "nats"}}
		c.Spec.Auth.Mode = v1alpha1.AuthJWT
		c.Spec.Auth.Accounts = from
		return c
	}
	users := jwtCluster(nil)
	users.Spec.Auth.Mode = v1alpha1.AuthUsers
	deleting := jwtCluster(nil)
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	selector := &v1alpha1.AccountsFrom{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tenant": "yes"}}}
	for _, tc := range []struct {
		name   string
		c      *v1alpha1.NatsCluster
		ns     string
		labels map[string]string
		want   bool
	}{
		{"no cluster", nil, "platform", nil, false},
		{"own namespace", jwtCluster(nil), "platform", nil, true},
		{"own namespace, mode users", users, "platform", nil, false},
		{"a cluster being deleted", deleting, "platform", nil, false},
		{"another namespace, nothing admitted", jwtCluster(nil), "team-a", nil, false},
		{"listed", jwtCluster(&v1alpha1.AccountsFrom{Namespaces: []string{"team-a"}}), "team-a", nil, true},
		{"not listed", jwtCluster(&v1alpha1.AccountsFrom{Namespaces: []string{"team-a"}}), "team-b", nil, false},
		{"selected", jwtCluster(selector), "team-b", map[string]string{"tenant": "yes"}, true},
		{"not selected", jwtCluster(selector), "team-b", map[string]string{"tenant": "no"}, false},
		{"empty selector: every namespace", jwtCluster(&v1alpha1.AccountsFrom{NamespaceSelector: &metav1.LabelSelector{}}), "team-c", nil, true},
	} {
		if got := Admits(tc.c, tc.ns, tc.labels); got != tc.want {
			t.Errorf("%s: Admits = %v, want %v", tc.name, got, tc.want)
		}
	}
	if NeedsNamespaceLabels(jwtCluster(&v1alpha1.AccountsFrom{Namespaces: []string{"team-a"}}), "team-a") {
		t.Error("a listed namespace needs no labels")
	}
	if !NeedsNamespaceLabels(jwtCluster(selector), "team-b") {
		t.Error("a selector needs the namespace's labels")
	}
}
