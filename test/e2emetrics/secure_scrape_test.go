package e2emetrics_test

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/loopback"
	"github.com/kubenats/kubenats/test/poll"
)

// TestMetricsOverMonitorTLSUnderIstioStrict: a three-server cluster whose
// monitor port speaks https (spec.tls.monitor, the client certificate
// from a cert-manager CA issuer) in the mesh under STRICT, with monitoring
// on, is scraped by a real Prometheus outside the mesh, through the job
// its PodMonitor makes: every server's metrics container reads its server
// over https on the pod's loopback (kubenats_exporter_server_up 1, and its
// /varz series served), and Prometheus reaches port 7777 in plaintext
// through each server's sidecar (the PeerAuthentication keeps that port
// PERMISSIVE), over a window of several scrapes.
//
// Careless variant watched failing: a PeerAuthentication without the
// metrics port's exception (the sidecars refuse Prometheus's plaintext:
// no series at all). It would fail too for an exporter that reads the
// monitor port over http once it speaks https (server_up 0, no /varz
// series); not run. Found on the way: the mesh model's agent verified the
// app's certificate on an https probe, which Istio's does not, so the
// cluster never turned Ready (TestAgentProbesAnHTTPSAppWithoutVerifying).
// The NetworkPolicy rule for port 7777 is judged by test/netpol's
// evaluator: the loopback cluster enforces no NetworkPolicy.
func TestMetricsOverMonitorTLSUnderIstioStrict(t *testing.T) {
	t.Parallel()
	ns := e2ekit.Namespace(t)
	ctx := e2ekit.Ctx(t)
	if err := loopback.CreateYAML(ctx, e2ekit.Cluster.Client, ns, loopback.CAIssuerYAML("ca", "metrics-ca-root")); err != nil {
		t.Fatal(err)
	}
	f := e2ekit.FormClusterIn(t, ns, "nats", monitored(""), func(s *v1alpha1.NatsClusterSpec) {
		s.TLS.Client = &v1alpha1.ClientTLSSpec{IssuerRef: &v1alpha1.IssuerRef{Name: "ca"}}
		s.TLS.Monitor = &v1alpha1.MonitorTLSSpec{}
		s.Mesh = &v1alpha1.MeshSpec{Istio: &v1alpha1.IstioMeshSpec{MTLS: v1alpha1.MeshMTLSStrict}}
	})
	e2ekit.DiagnoseOnFailure(t, ns)
	c := f.Cluster
	e2ekit.Eventually(t, meshTimeout, func() error {
		e2ekit.Get(t, c)
		m := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionMeshReady)
		if m == nil || m.Status != "True" || m.Reason != v1alpha1.ReasonMeshStrict {
			return fmt.Errorf("MeshReady %+v, want True %s", m, v1alpha1.ReasonMeshStrict)
		}
		return nil
	})

	p := startPrometheus(t, "secure", scrapeJobs(t, adminKubeconfig(t), c), false)
	sel := selector(f)
	// Over the last three scrapes, as checkWorkloadCounts reads: one
	// scrape that misses on a loaded machine is not what this counts.
	want := map[string]float64{
		fmt.Sprintf(`count(last_over_time(kubenats_exporter_server_up{%s}[%s]) == 1)`, sel, 3*promScrape): 3,
		fmt.Sprintf(`count(last_over_time(nats_varz_uptime_seconds{%s}[%s]))`, sel, 3*promScrape):         3,
	}
	check := func() error {
		for q, n := range want {
			got, err := promOne(ctx, p, q)
			if err != nil {
				return err
			}
			if got != n {
				return fmt.Errorf("%s = %v, want %v", q, got, n)
			}
		}
		return nil
	}
	e2ekit.Eventually(t, e2ekit.Wait, check)
	poll.Holds(t, 4*promScrape, check)
}

// meshTimeout bounds the staged migration to STRICT: three servers
// replaced one at a time, twice.
const meshTimeout = 8 * time.Minute
