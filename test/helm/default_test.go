package helm

import (
	"strings"
	"testing"
)

// notInChart are the objects of config/ that the chart leaves out, each
// with why: Helm installs into a namespace it is given (helm install -n
// kubenats-system --create-namespace), it does not own that namespace.
var notInChart = map[string]string{
	"Namespace//" + operatorNamespace: "the release namespace is Helm's; docs/install.md labels it for the restricted Pod Security level",
}

// TestDefaultValuesInstallWhatConfigDefaultDoes: the chart at its default
// values, rendered by Helm's library into kubenats-system, is
// config/default (as kustomize builds it into dist/install.yaml) object
// for object and field for field: the CRDs, the RBAC, the admission
// policies, the hardened Deployment and the dashboards; nothing more,
// nothing less but the namespace itself. The generated parts cannot drift
// (hack/genchart writes them in make generate); this holds the
// hand-written Deployment and the generator's guards to config/ too.
//
// Careless variant run: readOnlyRootFilesystem: false in
// templates/deployment.yaml fails it with
// "Deployment/kubenats-system/kubenats.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem:
// want true, got false".
func TestDefaultValuesInstallWhatConfigDefaultDoes(t *testing.T) {
	want := readDist(t, "install.yaml")
	for k := range notInChart {
		if _, ok := want[k]; !ok {
			t.Fatalf("%s is not in dist/install.yaml any more: take it off notInChart", k)
		}
		delete(want, k)
	}
	got := mustRender(t, operatorNamespace, "")
	// The one change the chart makes on purpose: helm uninstall keeps the
	// CRDs (and so every user's NatsCluster and its data).
	for _, k := range got.of("CustomResourceDefinition") {
		md := got[k]["metadata"].(map[string]any)
		ann, _ := md["annotations"].(map[string]any)
		if ann["helm.sh/resource-policy"] != "keep" {
			t.Errorf("%s: no helm.sh/resource-policy: keep", k)
			continue
		}
		if delete(ann, "helm.sh/resource-policy"); len(ann) == 0 {
			delete(md, "annotations")
		}
	}
	if d := compare(want, got); len(d) > 0 {
		t.Errorf("the chart at its defaults differs from dist/install.yaml:\n%s", strings.Join(d, "\n"))
	}
	if n := len(want.of("CustomResourceDefinition")); n < 7 {
		t.Errorf("only %d CRDs compared", n)
	}
}

// TestNamespacedModeInstallsWhatConfigNamespacedDoes: watchNamespaces
// gives what config/namespaced gives for its example namespaces
// (dist/install-namespaced.yaml): the flag, a RoleBinding per namespace,
// reading those namespaces by name, and no cluster-wide binding of the
// manager's role.
//
// Careless variant run: templates/namespaced.yaml without the
// kubenats-namespaces ClusterRole (missing object).
func TestNamespacedModeInstallsWhatConfigNamespacedDoes(t *testing.T) {
	want := readDist(t, "install-namespaced.yaml")
	for k := range notInChart {
		delete(want, k)
	}
	got := mustRender(t, operatorNamespace, "watchNamespaces: [team-a, team-b]")
	for _, k := range got.of("CustomResourceDefinition") {
		delete(got, k) // compared above; config/namespaced has the same
		delete(want, k)
	}
	if d := compare(want, got); len(d) > 0 {
		t.Errorf("the chart in namespaced mode differs from dist/install-namespaced.yaml:\n%s", strings.Join(d, "\n"))
	}
	if _, ok := got["ClusterRoleBinding//kubenats-manager"]; ok {
		t.Error("namespaced mode still binds the manager's role cluster-wide")
	}
}
