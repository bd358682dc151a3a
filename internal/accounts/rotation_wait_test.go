package accounts

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestAwaitedAccountsLeavesOutNamespacesNoLongerAdmitted: a rotation of
// the operator signing key waits only for the live accounts with keys of
// namespaces the cluster admits, by name or by its selector. Careless
// variant caught (run): counting every account on the cluster, as before,
// which waited for ever on an account whose namespace was taken off the
// list (no pass of its own signs it again).
func TestAwaitedAccountsLeavesOutNamespacesNoLongerAdmitted(t *testing.T) {
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "platform", Name: "nats"},
		Spec: v1alpha1.NatsClusterSpec{Auth: v1alpha1.AuthSpec{Mode: v1alpha1.AuthJWT, Accounts: &v1alpha1.AccountsFrom{
			Namespaces:        []string{"team-a"},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tenant": "yes"}},
		}}}}
	account := func(ns, name, signedBy string, edit ...func(*v1alpha1.NatsAccount)) v1alpha1.NatsAccount {
		a := v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:   v1alpha1.NatsAccountSpec{Cluster: v1alpha1.ClusterRef{Namespace: "platform", Name: "nats"}},
			Status: v1alpha1.NatsAccountStatus{PublicKey: "A" + name, SignedBy: signedBy}}
		for _, e := range edit {
			e(&a)
		}
		return a
	}
	now := metav1.Now()
	list := []v1alpha1.NatsAccount{
		account("platform", "own", "ONEW"),
		account("team-a", "listed", "OOLD"),
		account("team-b", "selected", "OOLD"),
		account("team-c", "taken-off", "OOLD"),
		account("team-d", "label-removed", "OOLD"),
		account("team-a", "no-keys-yet", "", func(a *v1alpha1.NatsAccount) { a.Status.PublicKey = "" }),
		account("team-a", "deleted", "OOLD", func(a *v1alpha1.NatsAccount) {
			a.DeletionTimestamp = &now
			a.Finalizers = []string{"x"}
		}),
		account("team-a", "other-cluster", "OOLD", func(a *v1alpha1.NatsAccount) { a.Spec.Cluster.Name = "other" }),
	}
	labels := map[string]map[string]string{"team-b": {"tenant": "yes"}, "team-d": {"tenant": "no"}}
	awaited, unsigned := AwaitedAccounts(c, list, labels, "ONEW")
	if want := []string{"team-a/listed", "team-b/selected"}; awaited != 3 || !slices.Equal(unsigned, want) {
		t.Fatalf("awaited %d, unsigned %v; want 3 and %v", awaited, unsigned, want)
	}
}
