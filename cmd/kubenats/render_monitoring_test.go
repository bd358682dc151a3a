package main

import (
	"testing"
)

// TestRenderPrintsPodMonitor: with spec.monitoring, `kubenats render` prints
// the PodMonitor and the PrometheusRule of the cluster after its other
// objects, in its namespace, for GitOps users without the operator.
func TestRenderPrintsPodMonitor(t *testing.T) {
	docs := parseStream(t, renderOK(t, "testdata/monitoring.yaml"))
	found := map[string]bool{}
	for _, doc := range docs {
		k := field(doc, "kind")
		if k == "PodMonitor" || k == "PrometheusRule" {
			if field(doc, "metadata.namespace") != "team-a" || field(doc, "metadata.name") != "orders" || field(doc, "apiVersion") != "monitoring.coreos.com/v1" {
				t.Errorf("%s: %s/%s %s", k, field(doc, "metadata.namespace"), field(doc, "metadata.name"), field(doc, "apiVersion"))
			}
			found[k] = true
		}
	}
	if !found["PodMonitor"] || !found["PrometheusRule"] {
		t.Fatalf("printed %v, want a PodMonitor and a PrometheusRule", found)
	}
}
