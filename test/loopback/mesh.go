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
// pod's address on every declared port and forwards to the application,
// which listens on an address of its own that only the sidecar uses (the
// pod's localhost). Outbound capture works through DNS: a meshed pod's
// hosts file names, for every meshed destination, an address of its own
// sidecar's (one per destination), which originates mTLS to the
// destination's sidecar; destinations without a sidecar keep their real
// address and are reached in plaintext, as Istio's auto mTLS does.
type Mesh struct {
	ca    *meshCA
	addrs *addressBook
	logf  func(format string, args ...any)

	mu       sync.Mutex
	policies []PeerAuthentication
	// workloads are the meshed pods whose sidecar runs.
	workloads map[types.NamespacedName]*sidecar
	// changed is called (outside the lock) when the set of meshed
	// workloads changed: hosts files must be rewritten.
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
	// AppProbers are the app probes the agent serves, by path.
	AppProbers map[string]appProber
}

func newMesh(addrs *addressBook, logf func(string, ...any)) (*Mesh, error) {
	ca, err := newMeshCA()
	if err != nil {
		return nil, err
	}
	return &Mesh{ca: ca, addrs: addrs, logf: logf, workloads: map[types.NamespacedName]*sidecar{}}, nil
}

// SetPeerAuthentications replaces the mesh's policies. New connections
// follow them at once; an established plaintext connection that a port
// now STRICT would refuse is closed, as Envoy closes the connections of a
// filter chain it removed (there, after its drain time).
func (m *Mesh) SetPeerAuthentications(policies []PeerAuthentication) {
	m.mu.Lock()
	m.policies = append([]PeerAuthentication(nil), policies...)
	sidecars := make([]*sidecar, 0, len(m.workloads))
	for _, s := range m.workloads {
		sidecars = append(sidecars, s)
	}
	m.mu.Unlock()
	for _, s := range sidecars {
		s.enforcePolicy()
	}
}

// mode is the PeerAuthentication mode of a workload's port now.
func (m *Mesh) mode(w meshWorkload, port int32) MTLSMode {
	m.mu.Lock()
	defer m.mu.Unlock()
	return effectiveMode(m.policies, w.Pod.Namespace, w.Labels, port)
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
// file, for the meshed destination dst.
func (m *Mesh) outboundIP(src, dst types.NamespacedName) (string, error) {
	return m.addrs.address(src.Namespace, src.Name+"~to~"+dst.Namespace+"."+dst.Name)
}

// Meshed reports whether the pod's sidecar runs.
func (m *Mesh) Meshed(pod types.NamespacedName) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.workloads[pod] != nil
}

// hostsView is the address each record has in src's hosts file. A meshed
// pod reaches a pod of a headless Service through its own sidecar, in
// mTLS, only when every pod of that Service has a sidecar: for a headless
// Service Istio's auto mTLS is all-or-nothing across its pods (istio/istio
// issue 49584), and with one pod outside the mesh the client sidecar sends
// plaintext to all of them. Everything else keeps its own address.
func (m *Mesh) hostsView(src types.NamespacedName, records []dnsRecord) func(dnsRecord) string {
	type service struct{ ns, name string }
	partial := map[service]bool{}
	for _, r := range records {
		if !m.Meshed(types.NamespacedName{Namespace: r.ns, Name: r.pod}) {
			partial[service{r.ns, r.subdomain}] = true
		}
	}
	srcMeshed := m.Meshed(src)
	return func(r dnsRecord) string {
		if !srcMeshed || partial[service{r.ns, r.subdomain}] {
			return r.ip
		}
		ip, err := m.outboundIP(src, types.NamespacedName{Namespace: r.ns, Name: r.pod})
		if err != nil {
			return r.ip
		}
		return ip
	}
}

// startSidecar starts the sidecar of a workload (before its application:
// the proxy is up when the app first dials) and joins it to the mesh.
func (m *Mesh) startSidecar(w meshWorkload) (*sidecar, error) {
	cert, err := m.ca.workloadCert(w.Pod.Namespace, w.ServiceAccount)
	if err != nil {
		return nil, err
	}
	s := &sidecar{m: m, w: w, cert: cert, id: spiffeID(w.Pod.Namespace, w.ServiceAccount),
		podIP: w.IP, appIP: m.AppIP(w.Pod.Namespace, w.Pod.Name),
		outbound: map[types.NamespacedName][]net.Listener{}, conns: map[*proxiedConn]bool{}}
	if err := s.listenInbound(); err != nil {
		s.closeListeners()
		return nil, err
	}
	if err := s.startAgent(); err != nil {
		s.closeListeners()
		return nil, err
	}
	m.mu.Lock()
	if m.workloads[w.Pod] != nil {
		m.mu.Unlock()
		s.closeListeners()
		return nil, fmt.Errorf("mesh: %s already has a sidecar", w.Pod)
	}
	m.workloads[w.Pod] = s
	peers := make([]*sidecar, 0, len(m.workloads))
	for _, p := range m.workloads {
		peers = append(peers, p)
	}
	changed := m.changed
	m.mu.Unlock()
	// Every meshed pod, this one included, gets an outbound listener for
	// every meshed destination.
	for _, p := range peers {
		if err := s.listenOutbound(p.w); err != nil {
			m.logf("mesh: %s: outbound listener for %s: %v", w.Pod, p.w.Pod, err)
		}
		if p != s {
			if err := p.listenOutbound(w); err != nil {
				m.logf("mesh: %s: outbound listener for %s: %v", p.w.Pod, w.Pod, err)
			}
		}
	}
	m.logf("mesh: %s: sidecar up as %s, inbound %s%v, app at %s", w.Pod, s.id, s.podIP, w.Ports, s.appIP)
	if changed != nil {
		changed()
	}
	return s, nil
}

// stopSidecar drains the pod's sidecar as pilot-agent does on SIGTERM: no
// new connections from then on, established ones kept for drain, then
// everything closed. It returns once the sidecar is gone.
func (m *Mesh) stopSidecar(pod types.NamespacedName, drain time.Duration) {
	m.mu.Lock()
	s := m.workloads[pod]
	delete(m.workloads, pod)
	var peers []*sidecar
	for _, p := range m.workloads {
		peers = append(peers, p)
	}
	changed := m.changed
	m.mu.Unlock()
	if s == nil {
		return
	}
	for _, p := range peers {
		p.closeOutbound(pod)
	}
	if changed != nil {
		changed()
	}
	s.drain(drain)
	m.logf("mesh: %s: sidecar stopped after a drain of %s", pod, drain)
}
