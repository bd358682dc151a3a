package loopback

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// A proxy that crashes (Envoy or pilot-agent gone, the istio-proxy
// container exited) while its pod stays: the pod keeps its injection, its
// tlsMode label and its traffic capture, so the rest of the mesh still
// counts it as meshed and sends it mTLS; with nobody on the capture ports
// every captured connection to the pod, and every connection its app
// opens through it, is refused; established ones are reset. Ports that
// iptables does not capture keep working. The kubelet starts the container
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
// and the outbound listeners of its view.
func (m *Mesh) reviveSidecar(pod types.NamespacedName) error {
	m.mu.Lock()
	s := m.workloads[pod]
	m.mu.Unlock()
	if s == nil {
		return fmt.Errorf("mesh: %s has no sidecar", pod)
	}
	s.mu.Lock()
	s.crashed = false
	s.mu.Unlock()
	if err := s.listenInbound(false); err != nil {
		s.closeListeners()
		s.mu.Lock()
		s.crashed = true
		s.mu.Unlock()
		return err
	}
	if err := s.startAgent(); err != nil {
		return err
	}
	s.openOutbound(s.currentView())
	m.logf("mesh: %s: proxy restarted", pod)
	m.notifyChanged()
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
