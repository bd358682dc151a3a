package loopback

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// A proxy that crashes (Envoy or pilot-agent gone, the istio-proxy
// container exited) while its pod stays: the pod keeps its injection, its
// tlsMode label and its traffic capture, so the rest of the mesh still
// counts it as meshed and sends it mTLS; with nobody on the capture ports
// every connection to the pod, and every connection its app opens, is
// refused; established ones are reset. The kubelet starts the container
// again (reviveSidecar) after its restart back-off.

// crashSidecar takes the pod's proxy down without leaving the mesh.
func (m *Mesh) crashSidecar(pod types.NamespacedName) error {
	m.mu.Lock()
	s := m.workloads[pod]
	m.mu.Unlock()
	if s == nil {
		return fmt.Errorf("mesh: %s has no running sidecar", pod)
	}
	s.mu.Lock()
	s.crashed = true
	conns := make([]*proxiedConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	s.closeListeners()
	for _, c := range conns {
		c.close()
	}
	m.logf("mesh: %s: proxy crashed: its ports refuse every connection", pod)
	return nil
}

// reviveSidecar starts a crashed proxy again: inbound capture, the agent,
// and an outbound listener for every meshed destination.
func (m *Mesh) reviveSidecar(pod types.NamespacedName) error {
	m.mu.Lock()
	s := m.workloads[pod]
	peers := make([]*sidecar, 0, len(m.workloads))
	for _, p := range m.workloads {
		peers = append(peers, p)
	}
	m.mu.Unlock()
	if s == nil {
		return fmt.Errorf("mesh: %s has no sidecar", pod)
	}
	s.mu.Lock()
	s.crashed = false
	s.mu.Unlock()
	if err := s.listenInbound(); err != nil {
		s.closeListeners()
		s.mu.Lock()
		s.crashed = true
		s.mu.Unlock()
		return err
	}
	if err := s.startAgent(); err != nil {
		return err
	}
	for _, p := range peers {
		if err := s.listenOutbound(p.w); err != nil {
			m.logf("mesh: %s: outbound listener for %s: %v", pod, p.w.Pod, err)
		}
	}
	m.logf("mesh: %s: proxy restarted", pod)
	return nil
}

// sidecarCrashed reports whether the pod's proxy is down after a crash.
func (m *Mesh) sidecarCrashed(pod types.NamespacedName) bool {
	m.mu.Lock()
	s := m.workloads[pod]
	m.mu.Unlock()
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.crashed
}
