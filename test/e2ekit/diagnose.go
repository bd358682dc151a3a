package e2ekit

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// diagnoseOnFailure logs, when the test fails, what explains most
// failures: the NatsCluster's status, the pods' statuses, the tail of each
// server's log and of the kubelet's.
func DiagnoseOnFailure(t *testing.T, ns string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx := Ctx(t)
		var clusters v1alpha1.NatsClusterList
		if err := Cluster.Client.List(ctx, &clusters, client.InNamespace(ns)); err == nil {
			for _, c := range clusters.Items {
				status, _ := yaml.Marshal(c.Status)
				t.Logf("NatsCluster %s status:\n%s", c.Name, status)
			}
		}
		var pods corev1.PodList
		if err := Cluster.Client.List(ctx, &pods, client.InNamespace(ns)); err == nil {
			for _, p := range pods.Items {
				status, _ := yaml.Marshal(p.Status)
				t.Logf("pod %s (node %q) status:\n%s", p.Name, p.Spec.NodeName, status)
				t.Logf("pod %s server log (tail):\n%s", p.Name, LastLines(Cluster.ServerLog(ns, p.Name), 40))
			}
		}
		t.Logf("kubelet log (tail):\n%s", LastLines(Cluster.KubeletLog(), 60))
		t.Logf("everything else is in %s", Cluster.Dir)
	})
}

func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... %d lines before", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
