package loopback

import (
	"fmt"
	"net"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Mesh is the loopback cluster's model of an Istio sidecar mesh (see
// doc.go for what it covers). Each meshed workload's sidecar owns the
// pod's address on every captured port and forwards to the application,
// which listens on an address of its own that only the sidecar uses (the
// pod's localhost). Outbound capture works through DNS: a meshed pod's
// hosts file names, for every pod its sidecar was told of, an address of
// its own sidecar's (one per destination), where the sidecar decides as
// Envoy would what to send (mesh_view.go): mTLS, plaintext or the
// connection as it is. What each proxy knows is what istiod last pushed
// it, a moment after the change (mesh_push.go).
type Mesh struct {
	ca    *meshCA
	addrs *addressBook
	logf  func(format string, args ...any)

	// listEndpoints and listServices read the cluster as istiod would:
	// every pod with an address and a DNS name, every Service.
	listEndpoints func() []meshEndpoint
	listServices  func() []meshService

	// pushMu orders the views: one is read and numbered at a time.
	pushMu sync.Mutex

	mu       sync.Mutex
	policies []PeerAuthentication
	seq      uint64
	// workloads are the meshed pods whose sidecar runs.
	workloads map[types.NamespacedName]*sidecar
	clients   map[*MeshClient]bool
	// pushDelay is how long a push takes to reach a proxy, by the proxy's
	// namespace ("" for the default).
	pushDelay map[string]time.Duration
	// changed is called (outside the lock) when what a pod's hosts file
	// shows may have changed.
	changed func()
}

// meshWorkload is what a sidecar knows of its pod.
type meshWorkload struct {
	Pod types.NamespacedName
	// IP is the pod's own address (its incarnation's), which the sidecar
	// holds.
	IP             string
	ServiceAccount string
	Labels         map[string]string
	Ports          []int32 // every port the pod's containers declare
	// Capture is which connections iptables sends to the sidecar.
	Capture trafficCapture
	// AppProbers are the app probes the agent serves, by path.
	AppProbers map[string]appProber
}

func newMesh(addrs *addressBook, logf func(string, ...any)) (*Mesh, error) {
	ca, err := newMeshCA()
	if err != nil {
		return nil, err
	}
	return &Mesh{ca: ca, addrs: addrs, logf: logf, workloads: map[types.NamespacedName]*sidecar{},
		clients: map[*MeshClient]bool{}, pushDelay: map[string]time.Duration{},
		listEndpoints: func() []meshEndpoint { return nil }, listServices: func() []meshService { return nil }}, nil
}

// SetPeerAuthentications replaces the mesh's policies. Each proxy follows
// them once the push reaches it; then an established plaintext connection
// that a port now STRICT would refuse is closed, as Envoy closes the
// connections of a filter chain it removed (there, after its drain time).
func (m *Mesh) SetPeerAuthentications(policies []PeerAuthentication) {
	m.mu.Lock()
	m.policies = append([]PeerAuthentication(nil), policies...)
	m.mu.Unlock()
	m.push()
}

// AppIP is where a meshed pod's application listens, reachable only by
// its sidecar (and the agent's rewritten probes).
func (m *Mesh) AppIP(ns, pod string) string {
	ip, err := m.addrs.address(ns, pod+"~app")
	if err != nil {
		panic(err)
	}
	return ip
}

// outboundIP is the address of src's sidecar that stands, in src's hosts
// file, for the destination pod dst.
func (m *Mesh) outboundIP(src, dst types.NamespacedName) (string, error) {
	return m.addrs.address(src.Namespace, src.Name+"~to~"+dst.Namespace+"."+dst.Name)
}

// Meshed reports whether the pod's sidecar runs.
func (m *Mesh) Meshed(pod types.NamespacedName) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.workloads[pod] != nil
}

// hostsView is the address each record has in src's hosts file. A pod
// without a sidecar, or a destination src's sidecar was not told of (a
// new pod before the push), has no stand-in for (standsIn) or whose
// address is excluded from capture, keeps its own address: the
// connection leaves as dialed. Every other
// destination is an address of src's sidecar, which decides per
// connection (outbound in mesh_view.go).
func (m *Mesh) hostsView(src types.NamespacedName, _ []dnsRecord) func(dnsRecord) string {
	m.mu.Lock()
	s := m.workloads[src]
	m.mu.Unlock()
	if s == nil {
		return func(r dnsRecord) string { return r.ip }
	}
	v := s.currentView()
	return func(r dnsRecord) string {
		dst := types.NamespacedName{Namespace: r.ns, Name: r.pod}
		e, ok := v.endpoint(dst)
		if !ok || e.IP != r.ip || !v.standsIn(src, e) || s.w.Capture.excludesAddress(r.ip) {
			return r.ip
		}
		ip, err := m.outboundIP(src, dst)
		if err != nil {
			return r.ip
		}
		return ip
	}
}

// startSidecar starts the sidecar of a workload (before its application:
// the proxy is up when the app first dials) with istiod's view as it is
// now (its first configuration), and joins it to the mesh.
func (m *Mesh) startSidecar(w meshWorkload) (*sidecar, error) {
	cert, err := m.ca.workloadCert(w.Pod.Namespace, w.ServiceAccount)
	if err != nil {
		return nil, err
	}
	s := &sidecar{m: m, w: w, cert: cert, id: spiffeID(w.Pod.Namespace, w.ServiceAccount),
		podIP: w.IP, appIP: m.AppIP(w.Pod.Namespace, w.Pod.Name),
		outbound: map[types.NamespacedName]map[int32]net.Listener{}, conns: map[*proxiedConn]bool{}}
	s.view = m.current()
	if err := s.listenInbound(true); err != nil {
		s.closeListeners()
		s.closeBypass()
		return nil, err
	}
	if err := s.startAgent(); err != nil {
		s.closeListeners()
		s.closeBypass()
		return nil, err
	}
	m.mu.Lock()
	if m.workloads[w.Pod] != nil {
		m.mu.Unlock()
		s.closeListeners()
		s.closeBypass()
		return nil, fmt.Errorf("mesh: %s already has a sidecar", w.Pod)
	}
	m.workloads[w.Pod] = s
	m.mu.Unlock()
	s.openOutbound(s.currentView())
	m.logf("mesh: %s: sidecar up as %s, inbound %s%v, app at %s", w.Pod, s.id, s.podIP, w.Ports, s.appIP)
	m.notifyChanged()
	return s, nil
}

func (m *Mesh) notifyChanged() {
	m.mu.Lock()
	changed := m.changed
	m.mu.Unlock()
	if changed != nil {
		changed()
	}
}

// stopSidecar drains the pod's sidecar as pilot-agent does on SIGTERM: no
// new connections from then on, established ones kept for drain, then
// everything closed. It returns once the sidecar is gone.
func (m *Mesh) stopSidecar(pod types.NamespacedName, drain time.Duration) {
	m.mu.Lock()
	s := m.workloads[pod]
	delete(m.workloads, pod)
	m.mu.Unlock()
	if s == nil {
		return
	}
	m.notifyChanged()
	s.drain(drain)
	m.logf("mesh: %s: sidecar stopped after a drain of %s", pod, drain)
}
