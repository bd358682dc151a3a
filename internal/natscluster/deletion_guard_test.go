package natscluster

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestDeletionGuardCountsOnlyWhatTheClusterServes: a cluster being
// deleted counts the resources of other namespaces it served (JetStream
// resources of allowed namespaces, accounts of admitted namespaces, by
// name or by label), and not those of namespaces it never admitted.
// Careless variants run: no check at all ("team-x's Stream holds the
// deletion, although the cluster never served it": any namespace could
// hold any cluster by naming it), and
// accounts.Admits on the cluster as it is, being deleted ("team-b's
// admitted account does not hold the deletion": every account's
// deletion guard would be gone).
func TestDeletionGuardCountsOnlyWhatTheClusterServes(t *testing.T) {
	now := metav1.Now()
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "home", Name: "nats", DeletionTimestamp: &now}}
	c.Spec.JetStream.AllowedNamespaces = []string{"team-a"}
	c.Spec.Auth.Mode = v1alpha1.AuthJWT
	c.Spec.Auth.Accounts = &v1alpha1.AccountsFrom{
		Namespaces:        []string{"team-b"},
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"nats": "home"}},
	}
	for _, tc := range []struct {
		what    string
		served  bool
		counted func() bool
	}{
		{"team-a's Stream", true, func() bool { return servesJetStreamOf(c, "team-a") }},
		{"team-x's Stream", false, func() bool { return servesJetStreamOf(c, "team-x") }},
		{"team-b's admitted account", true, func() bool { return admittedAccountsOf(c, "team-b", nil) }},
		{"team-c's account admitted by its label", true, func() bool { return admittedAccountsOf(c, "team-c", map[string]string{"nats": "home"}) }},
		{"team-x's account", false, func() bool { return admittedAccountsOf(c, "team-x", map[string]string{"nats": "other"}) }},
	} {
		if got := tc.counted(); got != tc.served {
			if tc.served {
				t.Errorf("%s does not hold the deletion", tc.what)
			} else {
				t.Errorf("%s holds the deletion, although the cluster never served it", tc.what)
			}
		}
	}
	if c.DeletionTimestamp == nil {
		t.Error("the check cleared the cluster's own deletion timestamp")
	}
}
