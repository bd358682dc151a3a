package loopback

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The proxy's health endpoints, as pilot-agent and Envoy serve them on the
// pod's address: the agent's status port (15020) answers the kubelet's
// probes that the injector rewrote, /app-health/<container>/<kind>, by
// running the original probe (ISTIO_KUBE_APP_PROBERS) against the app
// from inside the pod (here: its app address), and /healthz/ready; Envoy's
// 15021 answers /healthz/ready, which the proxy container's own probes ask.
// Both go with the proxy: a crashed proxy answers no probe.

// startAgent listens on the agent's and Envoy's health ports.
func (s *sidecar) startAgent() error {
	mux := http.NewServeMux()
	mux.HandleFunc("/app-health/", s.serveAppHealth)
	mux.HandleFunc("/healthz/ready", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	for _, port := range []int{istioAgentPort, istioEnvoyHealthPort} {
		l, err := net.Listen("tcp", net.JoinHostPort(s.podIP, strconv.Itoa(port)))
		if err != nil {
			return fmt.Errorf("mesh: %s: agent port %d: %w", s.w.Pod, port, err)
		}
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		s.mu.Lock()
		s.agents = append(s.agents, srv)
		s.mu.Unlock()
		go func() { _ = srv.Serve(l) }()
	}
	return nil
}

func (s *sidecar) stopAgent() {
	s.mu.Lock()
	agents := s.agents
	s.agents = nil
	s.mu.Unlock()
	for _, srv := range agents {
		_ = srv.Close()
	}
}

// serveAppHealth runs the app prober registered for the path: 200 when
// the app answers as the kubelet would have counted a success, 500
// otherwise (pilot-agent's answers), 404 for a path without a prober.
func (s *sidecar) serveAppHealth(w http.ResponseWriter, r *http.Request) {
	p, ok := s.w.AppProbers[r.URL.Path]
	if !ok {
		http.Error(w, "no prober for "+r.URL.Path, http.StatusNotFound)
		return
	}
	timeout := seconds(p.TimeoutSeconds, 1)
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	if err := s.probeApp(ctx, p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// probeApp asks the app at its own address: the agent runs inside the
// pod, so no policy applies to it.
func (s *sidecar) probeApp(ctx context.Context, p appProber) error {
	switch {
	case p.HTTPGet != nil:
		g := p.HTTPGet
		scheme := strings.ToLower(string(g.Scheme))
		if scheme == "" {
			scheme = "http"
		}
		path := g.Path
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		url := fmt.Sprintf("%s://%s%s", scheme, net.JoinHostPort(s.appIP, g.Port.String()), path)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		for _, h := range g.HTTPHeaders {
			req.Header.Add(h.Name, h.Value)
		}
		// Istio's agent asks the app as the kubelet would: no TLS
		// verification for an https probe, no connection kept.
		resp, err := probeClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("app answered %d", resp.StatusCode)
		}
		return nil
	case p.TCPSocket != nil:
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(s.appIP, p.TCPSocket.Port.String()))
		if err != nil {
			return err
		}
		return conn.Close()
	}
	return errors.New("an app prober with neither httpGet nor tcpSocket")
}
