package natscluster

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/servers"
)

// TestMonitorClientsFollowNoRedirect: every client the controller reaches
// a monitor port with (the version probe's, the hang check's, the https
// one monitorURL makes) leaves a redirect unfollowed: the address it names
// is never dialed. Careless variant caught: today's main, whose clients
// had the default CheckRedirect and a plain dial (the second server was
// hit, and the hang check's own request went there).
func TestMonitorClientsFollowNoRedirect(t *testing.T) {
	var hits atomic.Int32
	second := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"version":"9.9.9"}`))
	}))
	defer second.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, second.URL+r.URL.Path, http.StatusFound)
	}))
	defer first.Close()
	host, port, _ := net.SplitHostPort(first.Listener.Addr().String())
	// The pod's monitor port is the first server: the dialer maps it there.
	dial := podPortDialer{port: port}
	probe := NewVersionProbe(DefaultAnswerBound, dial)
	pod := &corev1.Pod{}
	pod.Name, pod.Status.PodIP = "nats-0", host
	a := servers.Access{Cluster: &v1alpha1.NatsCluster{}}

	url, hc := a.MonitorURL(probe.HTTP, pod, "/varz")
	if v, err := natsmon.FetchVersion(context.Background(), hc, url); err == nil || v != "" {
		t.Errorf("version probe: %q, %v", v, err)
	}
	hang := natsmon.NewClient(DefaultAnswerBound, probe.HTTP.Transport)
	url, hc = a.MonitorURL(hang, pod, "/healthz")
	if silent(context.Background(), hc, url, DefaultAnswerBound) {
		t.Error("the redirect counted as a hang")
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the redirect target was hit %d times", n)
	}
}

// podPortDialer maps the monitor port (8222, where a real pod listens) to
// the test server's port, and dials every other address as it is.
type podPortDialer struct{ port string }

func (d podPortDialer) Dial(network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if port == strconv.Itoa(render.MonitorPort) {
		port = d.port
	}
	return net.Dial(network, net.JoinHostPort(host, port))
}
