// Package manifest is the form in which objects leave the operator: applied
// to the API server, or printed as YAML for GitOps users.
package manifest

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Unstructured converts a typed object to the form that is applied and
// printed: no status. Typed structs always carry one, and applying it would
// make kubenats claim fields it never meant to set. (apimachinery already
// omits a zero creationTimestamp.)
func Unstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	delete(m, "status")
	prune(m)
	return &unstructured.Unstructured{Object: m}, nil
}

// prune removes, at every depth, the empty status of embedded objects (the
// claim templates of a StatefulSet).
func prune(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if k == "status" && isEmptyMap(child) {
				delete(t, k)
				continue
			}
			prune(child)
		}
	case []any:
		for _, child := range t {
			prune(child)
		}
	}
}

func isEmptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}
