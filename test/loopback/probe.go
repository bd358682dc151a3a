package loopback

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// probeKind names a container probe.
type probeKind string

const (
	startupProbe   probeKind = "Startup"
	readinessProbe probeKind = "Readiness"
	livenessProbe  probeKind = "Liveness"
)

// prober runs one probe of one container run, as the kubelet's prober
// worker does: a first check after initialDelaySeconds, then one each
// periodSeconds, and a verdict once successThreshold checks in a row passed
// or failureThreshold in a row failed. It reports only verdicts that change.
type prober struct {
	kind  probeKind
	probe *corev1.Probe
	ip    string
	ports []corev1.ContainerPort
	// report hands a verdict to the pod's worker; false once the run is over.
	report func(ok bool, message string) bool
	// answered, when set, is called once, at the first check that got any
	// answer at all (an HTTP error status included): the server is up far
	// enough to handle signals.
	answered func()
}

func (p *prober) run(ctx context.Context) {
	wait := time.Duration(p.probe.InitialDelaySeconds) * time.Second
	period := seconds(p.probe.PeriodSeconds, 10)
	needSuccesses := int(max(p.probe.SuccessThreshold, 1))
	needFailures := int(p.probe.FailureThreshold)
	if needFailures < 1 {
		needFailures = 3 // the API's default
	}
	var verdict *bool
	successes, failures := 0, 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = period
		err := p.check(ctx)
		if ctx.Err() != nil {
			return
		}
		if p.answered != nil && (err == nil || errors.As(err, new(*statusError))) {
			p.answered()
			p.answered = nil
		}
		if err == nil {
			successes, failures = successes+1, 0
		} else {
			successes, failures = 0, failures+1
		}
		ok := err == nil
		if (ok && successes < needSuccesses) || (!ok && failures < needFailures) {
			continue
		}
		if verdict != nil && *verdict == ok {
			continue
		}
		verdict = &ok
		msg := ""
		if err != nil {
			msg = fmt.Sprintf("%s probe failed: %v", p.kind, err)
		}
		if !p.report(ok, msg) {
			return
		}
		// A passed startup probe and a failed liveness probe are final:
		// the first hands over to the other probes, the second restarts the
		// container, which gets probers of its own.
		if (p.kind == startupProbe && ok) || (p.kind != readinessProbe && !ok) {
			return
		}
	}
}

// seconds is a probe field in seconds, or the API's default when unset.
func seconds(v, def int32) time.Duration {
	if v <= 0 {
		v = def
	}
	return time.Duration(v) * time.Second
}

// check runs the probe's handler once.
func (p *prober) check(ctx context.Context) error {
	timeout := seconds(p.probe.TimeoutSeconds, 1)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch h := p.probe.ProbeHandler; {
	case h.HTTPGet != nil:
		return p.httpGet(ctx, h.HTTPGet)
	case h.TCPSocket != nil:
		port, err := p.port(h.TCPSocket.Port)
		if err != nil {
			return err
		}
		host := h.TCPSocket.Host
		if host == "" {
			host = p.ip
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return err
		}
		return conn.Close()
	}
	return fmt.Errorf("only httpGet and tcpSocket probes run here")
}

func (p *prober) httpGet(ctx context.Context, g *corev1.HTTPGetAction) error {
	port, err := p.port(g.Port)
	if err != nil {
		return err
	}
	host := g.Host
	if host == "" {
		host = p.ip
	}
	scheme := "http"
	if g.Scheme == corev1.URISchemeHTTPS {
		scheme = "https"
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port))}
	target, err := u.Parse(g.Path) // the path may carry a query
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "kube-probe/loopback")
	for _, h := range g.HTTPHeaders {
		req.Header.Set(h.Name, h.Value)
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	// The kubelet's rule: any 2xx or 3xx passes.
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return &statusError{code: resp.StatusCode}
	}
	return nil
}

// statusError is an HTTP probe's failure with an answer.
type statusError struct{ code int }

func (e *statusError) Error() string {
	return fmt.Sprintf("HTTP probe failed with statuscode: %d", e.code)
}

// probeClient, like the kubelet's, skips TLS verification and keeps no
// connections open between checks.
var probeClient = &http.Client{Transport: &http.Transport{
	TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as the kubelet does
	DisableKeepAlives: true,
}}

// port resolves a probe's port, by number or by the container port's name.
func (p *prober) port(port intstr.IntOrString) (int, error) {
	if port.Type == intstr.Int {
		return port.IntValue(), nil
	}
	for _, cp := range p.ports {
		if cp.Name == port.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("no container port named %q", port.StrVal)
}
