package render

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// typeMeta is set on every object: server-side apply and the YAML printer
// both need the kind on the object itself.
func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}
