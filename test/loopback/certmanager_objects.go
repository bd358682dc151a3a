package loopback

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/internal/manifest"
)

// CAIssuerYAML is a namespaced CA issuer named issuer, bootstrapped by a
// self-signed issuer: the CA's certificate and key are in caSecret.
func CAIssuerYAML(issuer, caSecret string) string {
	return fmt.Sprintf(`
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: %[1]s-bootstrap}
spec: {selfSigned: {}}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: %[2]s}
spec:
  isCA: true
  commonName: kubenats test CA
  secretName: %[2]s
  privateKey: {algorithm: ECDSA, size: 256}
  issuerRef: {name: %[1]s-bootstrap, kind: Issuer}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: %[1]s}
spec: {ca: {secretName: %[2]s}}
`, issuer, caSecret)
}

// CreateYAML creates every object of a multi-document YAML, the namespaced
// ones in ns (cluster-scoped kinds it knows keep no namespace).
func CreateYAML(ctx context.Context, k8s client.Client, ns, docs string) error {
	documents, err := manifest.Documents([]byte(docs))
	if err != nil {
		return err
	}
	for _, doc := range documents {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			return err
		}
		if obj.GetKind() != "ClusterIssuer" {
			obj.SetNamespace(ns)
		}
		if err := k8s.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

// TriggerRenewal sets a Certificate's Issuing condition, as `cmctl renew`
// does: cert-manager's issuing controllers re-issue at once, whatever the
// renewal time.
func TriggerRenewal(ctx context.Context, k8s client.Client, ns, name string) error {
	crt := &unstructured.Unstructured{}
	crt.SetAPIVersion("cert-manager.io/v1")
	crt.SetKind("Certificate")
	if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, crt); err != nil {
		return err
	}
	old, _, _ := unstructured.NestedSlice(crt.Object, "status", "conditions")
	conditions := slices.DeleteFunc(old, func(c any) bool { return c.(map[string]any)["type"] == "Issuing" })
	conditions = append(conditions, map[string]any{
		"observedGeneration": crt.GetGeneration(),
		"type":               "Issuing", "status": "True", "reason": "ManuallyTriggered",
		"message":            "re-issuance triggered by the test",
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	})
	if err := unstructured.SetNestedSlice(crt.Object, conditions, "status", "conditions"); err != nil {
		return err
	}
	return k8s.Status().Update(ctx, crt)
}
