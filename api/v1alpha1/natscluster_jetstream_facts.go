package v1alpha1

import "slices"

// AdmitsNamespace reports whether JetStream resources of namespace ns may
// name the cluster from outside its own namespace: allowedNamespaces lists
// ns, or "*".
func (j JetStreamSpec) AdmitsNamespace(ns string) bool {
	return slices.Contains(j.AllowedNamespaces, ns) || slices.Contains(j.AllowedNamespaces, "*")
}
