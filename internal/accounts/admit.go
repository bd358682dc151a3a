package accounts

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// Admits reports whether cluster c takes NatsAccounts from namespace ns,
// whose labels are nsLabels: c runs in mode jwt, is not being deleted, and
// ns is its own, listed in spec.auth.accounts.namespaces, or matched by
// its namespaceSelector (an empty selector matches every namespace, as
// everywhere in Kubernetes). The caller gives every "no" one reason and
// one text, so that a tenant learns nothing of a cluster it may not use.
func Admits(c *v1alpha1.NatsCluster, ns string, nsLabels map[string]string) bool {
	if c == nil || c.Spec.Auth.Mode != v1alpha1.AuthJWT || !c.DeletionTimestamp.IsZero() {
		return false
	}
	if ns == c.Namespace {
		return true
	}
	from := c.Spec.Auth.Accounts
	if from == nil {
		return false
	}
	if slices.Contains(from.Namespaces, ns) {
		return true
	}
	if from.NamespaceSelector == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(from.NamespaceSelector)
	return err == nil && sel.Matches(labels.Set(nsLabels))
}

// NeedsNamespaceLabels reports whether Admits may need ns's labels: only a
// selector reads them, so the namespace is read only then.
func NeedsNamespaceLabels(c *v1alpha1.NatsCluster, ns string) bool {
	return c != nil && ns != c.Namespace && c.Spec.Auth.Accounts != nil && c.Spec.Auth.Accounts.NamespaceSelector != nil &&
		!slices.Contains(c.Spec.Auth.Accounts.Namespaces, ns)
}

// ClusterOf is the NatsCluster account a lives on, as namespace and name:
// an unset namespace is the account's own.
func ClusterOf(a *v1alpha1.NatsAccount) (namespace, name string) {
	if a.Spec.Cluster.Namespace == "" {
		return a.Namespace, a.Spec.Cluster.Name
	}
	return a.Spec.Cluster.Namespace, a.Spec.Cluster.Name
}
