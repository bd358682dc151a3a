package envtest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// routeIssuerRefused is what the API server answers a spec that names a
// route issuer with (the CEL rule on spec.tls.routes.issuerRef).
const routeIssuerRefused = "the route CA is always the operator's own per-cluster CA"

// TestAStoredRouteIssuerKeepsItsClusterUpdatable: a NatsCluster stored
// with spec.tls.routes.issuerRef before the CRD refused the field (played
// here by installing the shipped CRD without that one rule, creating the
// object, then installing the shipped CRD) can still be updated, in its
// spec elsewhere and in its TLS beside the routes, and can drop the
// field; it cannot change the issuer, and no new object can name one.
// CRD validation ratcheting does this: a CEL rule is not held against a
// value unchanged since the stored object. It runs on an API server of
// its own: the suite's one serves the CRD every other test relies on.
// Careless variant caught (run): the rule written one level up, on
// spec.tls (!has(self.routes) || !has(self.routes.issuerRef)): the
// update of spec.tls.client is refused, since spec.tls changed (the
// replicas update still passes: ratcheting itself is in force here).
func TestAStoredRouteIssuerKeepsItsClusterUpdatable(t *testing.T) {
	t.Parallel()
	shipped := natsClusterCRD(t)
	rule := routeIssuerSchema(shipped, nil)
	if len(rule.XValidations) == 0 {
		t.Fatal("the shipped CRD has no rule on spec.tls.routes.issuerRef")
	}
	before := shipped.DeepCopy()
	ruleless := *rule.DeepCopy()
	ruleless.XValidations = nil
	routeIssuerSchema(before, &ruleless)

	env := &envtest.Environment{
		BinaryAssetsDirectory: filepath.Join("..", "..", "bin", "k8s"),
		CRDs:                  []*apiextensionsv1.CustomResourceDefinition{before},
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(scheme)
	_ = apiextensionsv1.AddToScheme(scheme)
	k, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	stored := natsCluster("default", "stored", func(s *v1alpha1.NatsClusterSpec) {
		s.TLS.Routes.IssuerRef = &v1alpha1.IssuerRef{Name: "platform-ca", Kind: "ClusterIssuer"}
	})
	if err := k.Create(ctx(t), stored); err != nil {
		t.Fatalf("storing a cluster with a route issuer under the CRD of before: %v", err)
	}
	// The shipped CRD, rule and all; the API server takes it in a moment.
	live := &apiextensionsv1.CustomResourceDefinition{}
	eventually(t, wait, func() error {
		if err := k.Get(ctx(t), client.ObjectKey{Name: shipped.Name}, live); err != nil {
			return err
		}
		routeIssuerSchema(live, &rule)
		return k.Update(ctx(t), live)
	})
	eventually(t, wait, func() error {
		fresh := natsCluster("default", "fresh", func(s *v1alpha1.NatsClusterSpec) {
			s.TLS.Routes.IssuerRef = &v1alpha1.IssuerRef{Name: "platform-ca", Kind: "ClusterIssuer"}
		})
		err := k.Create(ctx(t), fresh)
		if err == nil {
			_ = k.Delete(ctx(t), fresh)
			return fmt.Errorf("a new cluster with a route issuer is still accepted: the rule is not in force yet")
		}
		assertInvalid(t, err, "spec.tls.routes.issuerRef", routeIssuerRefused)
		return nil
	})

	patch := func(edit func(*v1alpha1.NatsClusterSpec)) error {
		if err := k.Get(ctx(t), client.ObjectKeyFromObject(stored), stored); err != nil {
			return err
		}
		old := stored.DeepCopy()
		edit(&stored.Spec)
		return k.Patch(ctx(t), stored, client.MergeFrom(old))
	}
	if err := patch(func(s *v1alpha1.NatsClusterSpec) { s.Replicas = ptr.To[int32](5) }); err != nil {
		t.Errorf("updating the replicas of a stored cluster with a route issuer: %v", err)
	}
	if err := patch(func(s *v1alpha1.NatsClusterSpec) {
		s.TLS.Client = &v1alpha1.ClientTLSSpec{HandshakeFirst: true}
	}); err != nil {
		t.Errorf("updating the client TLS of a stored cluster with a route issuer: %v", err)
	}
	err = patch(func(s *v1alpha1.NatsClusterSpec) { s.TLS.Routes.IssuerRef.Name = "another-ca" })
	assertInvalid(t, err, "spec.tls.routes.issuerRef", routeIssuerRefused)
	if err := patch(func(s *v1alpha1.NatsClusterSpec) { s.TLS.Routes.IssuerRef = nil }); err != nil {
		t.Errorf("removing the route issuer: %v", err)
	}
	if err := k.Get(ctx(t), client.ObjectKeyFromObject(stored), stored); err != nil || stored.Spec.TLS.Routes.IssuerRef != nil {
		t.Errorf("the route issuer is still there after its removal (%v)", err)
	}
}

// natsClusterCRD is the NatsCluster CRD as shipped (config/crd).
func natsClusterCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "kubenats.io_natsclusters.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

// routeIssuerSchema is the schema of spec.tls.routes.issuerRef in crd,
// first set to to when to is not nil.
func routeIssuerSchema(crd *apiextensionsv1.CustomResourceDefinition, to *apiextensionsv1.JSONSchemaProps) apiextensionsv1.JSONSchemaProps {
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	spec := root.Properties["spec"]
	tls := spec.Properties["tls"]
	routes := tls.Properties["routes"]
	if to != nil {
		routes.Properties["issuerRef"] = *to
		tls.Properties["routes"] = routes
		spec.Properties["tls"] = tls
		root.Properties["spec"] = spec
	}
	return routes.Properties["issuerRef"]
}
