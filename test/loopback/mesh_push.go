package loopback

import (
	"math/rand/v2"
	"time"
)

// istiod's pushes. A change (a policy, a pod's address, a Service) reaches
// each proxy on its own, a moment later: istiod debounces changes (100 ms
// by default, up to 10 s under a stream of them) and then sends every
// proxy its new configuration, which Envoy applies in its own time. Until
// then a proxy acts on the view it had: a new pod's peers send it
// plaintext as to an address they do not know, a policy is in force on
// some sidecars and not yet on others. A proxy that starts gets istiod's
// view as it is (its first configuration), with no delay.

// receiver is a proxy that istiod pushes to: a sidecar, or a meshed
// client of the test process.
type receiver interface {
	namespace() string
	receive(v *meshView)
}

// SetPushDelay makes pushes to the proxies of namespace ns ("" for every
// namespace without a delay of its own) take between d/2 and d, each
// proxy its own time for each push. Zero gives ns the default back (for
// "", delivers at once).
func (m *Mesh) SetPushDelay(ns string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d == 0 && ns != "" {
		delete(m.pushDelay, ns)
		return
	}
	m.pushDelay[ns] = d
}

func (m *Mesh) pushDelayFor(ns string) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d, ok := m.pushDelay[ns]; ok {
		return d
	}
	return m.pushDelay[""]
}

// current is istiod's view now, numbered after every earlier one.
func (m *Mesh) current() *meshView {
	m.pushMu.Lock()
	defer m.pushMu.Unlock()
	endpoints, services := m.listEndpoints(), m.listServices()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	return newMeshView(m.seq, append([]PeerAuthentication(nil), m.policies...), endpoints, services)
}

// push sends istiod's view now to every proxy, each after its delay.
func (m *Mesh) push() {
	v := m.current()
	m.mu.Lock()
	receivers := make([]receiver, 0, len(m.workloads)+len(m.clients))
	for _, s := range m.workloads {
		receivers = append(receivers, s)
	}
	for c := range m.clients {
		receivers = append(receivers, c)
	}
	m.mu.Unlock()
	for _, r := range receivers {
		d := m.pushDelayFor(r.namespace())
		if d <= 0 {
			r.receive(v)
			continue
		}
		r := r
		time.AfterFunc(d/2+rand.N(d/2+1), func() { r.receive(v) })
	}
}
