package realnode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manifest"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/realnode"
)

// TestHelmChartRunsOnTheRealNode: the chart, installed by Helm's own
// library (test/helm/cmd/chartinstall) in place of dist/install.yaml,
// runs the operator on the real node: the chart's Deployment Ready under
// its own securityContext (read from /proc), its webhook reached by the
// API server through the chart's Service, a NatsCluster formed by it.
// The install's objects are taken away first and put back after, CRDs
// kept (the chart's crds.install is off: Helm would refuse objects it
// did not make), so the other tests find the node as they left it.
// Careless variant seen failing: the chart's webhook Service aiming at a
// port the container does not have (the webhook's failure policy is
// Ignore: the orphan Stream was admitted for the whole minute).
func TestHelmChartRunsOnTheRealNode(t *testing.T) {
	needNode(t)
	waitOperator(t)
	root := repoRoot(t)
	install := filepath.Join(root, "dist", "install.yaml")
	shipped := installedObjects(t, install)
	kubeconfig, err := node.AdminKubeconfig("helm")
	if err != nil {
		t.Fatal(err)
	}
	helm := filepath.Join(t.TempDir(), "chartinstall")
	build := exec.Command("go", "build", "-o", helm, "./cmd/chartinstall")
	build.Dir = filepath.Join(root, "test", "helm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building chartinstall: %v\n%s", err, out)
	}
	chart := func(args ...string) {
		t.Helper()
		cmd := exec.Command(helm, append([]string{"-kubeconfig", kubeconfig, "-namespace", operatorNamespace}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("chartinstall %v: %v\n%s", args, err, out)
		}
	}

	for _, u := range shipped {
		if err := node.Client.Delete(ctxOf(t), u); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		// Back as it was: the chart's release gone, the install applied.
		cmd := exec.Command(helm, "-kubeconfig", kubeconfig, "-namespace", operatorNamespace, "uninstall")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("chartinstall uninstall: %v\n%s", err, out)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := realnode.ApplyInstall(ctx, node.Client, install); err != nil {
			t.Errorf("putting dist/install.yaml back: %v", err)
		}
		waitOperator(t)
	})
	poll.Until(t, 2*time.Minute, func() error {
		pods := &corev1.PodList{}
		if err := node.Client.List(ctxOf(t), pods, client.InNamespace(operatorNamespace), client.MatchingLabels{"app.kubernetes.io/name": operatorName}); err != nil {
			return err
		}
		if len(pods.Items) > 0 {
			return fmt.Errorf("the install's operator pod %s is still there", pods.Items[0].Name)
		}
		return nil
	})

	// A pod label of the test's tells the chart's operator from the
	// install's.
	values, err := json.Marshal(map[string]any{"crds": map[string]any{"install": false}, "podLabels": map[string]string{"test": "chart"}})
	if err != nil {
		t.Fatal(err)
	}
	chart("-chart", filepath.Join(root, "charts", "kubenats"), "-values", string(values), "install")
	pod := waitOperator(t)
	if pod.Labels["test"] != "chart" {
		t.Fatalf("the operator pod %s has labels %v: not the chart's", pod.Name, pod.Labels)
	}
	t.Logf("the chart's operator pod created to Ready: %s", readyAfter(pod).Round(10*time.Millisecond))
	pid, err := realnode.ContainerPID(pod, "manager")
	if err != nil {
		t.Fatal(err)
	}
	checkHardened(t, pid, "the chart's operator")
	ns := namespace(t)
	webhookRefusesAnOrphanStream(t, ns)
	formCluster(t, ns, "nats", func(s *v1alpha1.NatsClusterSpec) { s.Replicas = ptr.To[int32](1) })
}

// installedObjects are the objects of the install at path but its
// Namespace and CRDs: what the chart also makes.
func installedObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := manifest.Documents(data)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, doc := range docs {
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatal(err)
		}
		if k := u.GetKind(); k != "Namespace" && k != "CustomResourceDefinition" {
			out = append(out, u)
		}
	}
	return out
}
