package loopback

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestAgentProbesAnHTTPSAppWithoutVerifying: Istio's agent runs an https
// app probe as the kubelet does, without verifying the app's certificate
// (pilot-agent's app probe client skips verification, "matching
// Kubernetes"). Careless variant watched failing: the model's agent
// asking with Go's default client, harsher than Istio; a cluster with
// monitor TLS in the mesh never turned Ready under it
// (TestMetricsOverMonitorTLSUnderIstioStrict found it).
func TestAgentProbesAnHTTPSAppWithoutVerifying(t *testing.T) {
	app := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer app.Close()
	_, port, err := net.SplitHostPort(app.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := &sidecar{appIP: "127.0.0.1"}
	p := appProber{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.Parse(port), Scheme: corev1.URISchemeHTTPS}}
	if err := s.probeApp(context.Background(), p); err != nil {
		t.Fatalf("the agent's https probe of an app with its own certificate: %v", err)
	}
}
