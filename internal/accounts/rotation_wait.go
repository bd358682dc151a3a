package accounts

import "github.com/kubenats/kubenats/api/v1alpha1"

// AwaitedAccounts are the accounts a rotation of cluster c's operator
// signing key waits for before the previous key goes, counted (awaited),
// and of those the ones whose JWT the servers last took was not signed
// by signer (unsigned, as namespace/name). It waits for the live
// accounts on c with keys (a public key in status) of a namespace c
// admits; nsLabels holds the labels of the namespaces NeedsNamespaceLabels
// asks for. An account of a namespace c no longer admits is left out: no
// pass of its own signs it again (its disabled JWT is signed with the
// current key, and reports nothing), so waiting for it would stall the
// rotation for good; the servers refuse its users either way.
func AwaitedAccounts(c *v1alpha1.NatsCluster, list []v1alpha1.NatsAccount, nsLabels map[string]map[string]string, signer string) (awaited int, unsigned []string) {
	for i := range list {
		a := &list[i]
		ns, name := ClusterOf(a)
		if ns != c.Namespace || name != c.Name || !a.DeletionTimestamp.IsZero() || a.Status.PublicKey == "" {
			continue
		}
		if !Admits(c, a.Namespace, nsLabels[a.Namespace]) {
			continue
		}
		awaited++
		if a.Status.SignedBy != signer {
			unsigned = append(unsigned, a.Namespace+"/"+a.Name)
		}
	}
	return awaited, unsigned
}
