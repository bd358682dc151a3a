package loopback

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// What istiod pushes to a proxy, and what a client's sidecar does with a
// connection from it. Each proxy acts on the last view it was pushed
// (mesh_push.go), not on the cluster as it is now.

// meshEndpoint is a pod as istiod knows it: an endpoint of every Service
// that selects it.
type meshEndpoint struct {
	Pod            types.NamespacedName
	IP             string
	Labels         map[string]string
	ServiceAccount string
	Ports          []int32 // its containers' TCP ports
}

// injected: Istio's injector labelled the pod for mTLS
// (security.istio.io/tlsMode: istio). Clients count it in the mesh from
// then on, whether its proxy runs yet or not.
func (e meshEndpoint) injected() bool { return e.Labels[istioTLSModeLabel] == "istio" }

// istioTLSModeLabel is the injector's label that tells clients to send
// mTLS.
const istioTLSModeLabel = "security.istio.io/tlsMode"

// meshService is a Service as istiod knows it.
type meshService struct {
	Namespace, Name string
	Headless        bool
	Selector        map[string]string
	Ports           map[int32]meshProtocol // by Service port
}

func meshServiceOf(svc *corev1.Service) meshService {
	s := meshService{Namespace: svc.Namespace, Name: svc.Name, Headless: svc.Spec.ClusterIP == corev1.ClusterIPNone,
		Selector: svc.Spec.Selector, Ports: map[int32]meshProtocol{}}
	for _, p := range svc.Spec.Ports {
		s.Ports[p.Port] = protocolOf(p)
	}
	return s
}

func (s meshService) selects(e meshEndpoint) bool {
	return len(s.Selector) > 0 && s.Namespace == e.Pod.Namespace &&
		labels.SelectorFromSet(s.Selector).Matches(labels.Set(e.Labels))
}

// meshView is istiod's state as one push carried it.
type meshView struct {
	seq       uint64
	policies  []PeerAuthentication
	endpoints []meshEndpoint
	services  []meshService // sorted by namespace and name
}

func newMeshView(seq uint64, policies []PeerAuthentication, endpoints []meshEndpoint, services []meshService) *meshView {
	services = append([]meshService(nil), services...)
	sort.Slice(services, func(i, j int) bool {
		if services[i].Namespace != services[j].Namespace {
			return services[i].Namespace < services[j].Namespace
		}
		return services[i].Name < services[j].Name
	})
	return &meshView{seq: seq, policies: policies, endpoints: endpoints, services: services}
}

// endpointAt is the endpoint whose address is ip.
func (v *meshView) endpointAt(ip string) (meshEndpoint, bool) {
	for _, e := range v.endpoints {
		if e.IP == ip {
			return e, true
		}
	}
	return meshEndpoint{}, false
}

// endpoint is the pod's endpoint.
func (v *meshView) endpoint(pod types.NamespacedName) (meshEndpoint, bool) {
	for _, e := range v.endpoints {
		if e.Pod == pod {
			return e, true
		}
	}
	return meshEndpoint{}, false
}

// standsIn: src's hosts file names dst at an address of src's sidecar,
// which then decides each connection (outbound): dst is a pod of src's
// namespace that a headless Service selects. A pod of another namespace
// gets no such address (each would hold one of the harness's 254
// addresses for good): a meshed pod reaches it as dialed, in plaintext,
// which Istio would send in mTLS to a fully meshed Service; stricter,
// never kinder.
func (v *meshView) standsIn(src types.NamespacedName, dst meshEndpoint) bool {
	if dst.Pod.Namespace != src.Namespace {
		return false
	}
	for _, s := range v.services {
		if s.Headless && s.selects(dst) {
			return true
		}
	}
	return false
}

// outboundRoute is how a client's sidecar sends one connection.
type outboundRoute int

const (
	// routeDirect: uncaptured, or captured with no listener for the
	// address and port (Envoy's passthrough): plaintext, as dialed.
	routeDirect outboundRoute = iota
	// routePlain: through a listener of the destination's Service, in
	// plaintext (auto mTLS off for it).
	routePlain
	// routeMTLS: through a listener of the destination's Service, in
	// Istio's mTLS to the destination's sidecar.
	routeMTLS
)

func (r outboundRoute) String() string {
	return [...]string{"direct", "plaintext", "mTLS"}[r]
}

// outbound is what a client's sidecar does with a connection to ip:port.
type outbound struct {
	Route    outboundRoute
	Protocol meshProtocol // of the Service port; sniffed for a direct one
	Dst      meshEndpoint // set unless Route is direct
	Service  string       // ns/name of the Service whose listener took it
}

// outbound decides, as istiod configures a client sidecar: a pod's
// address has a listener only on the ports of the headless Services that
// select it (one per endpoint and TCP or undeclared port; an HTTP port's
// wildcard listener routes the same way here), where Services that are
// not headless have listeners on their cluster IPs only. Auto mTLS toward
// a headless Service is all or nothing (istiod's
// BestEffortInferServiceMTLSMode): plaintext when any pod it selects was
// not injected, or its namespace's (else the mesh's) policy is DISABLE;
// mTLS otherwise, whatever the destination's own workload policy.
// Several headless Services on one port: the first by namespace and name
// (istiod takes the oldest).
func (v *meshView) outbound(capture trafficCapture, ip string, port int32) outbound {
	if !capture.capturesOutbound(ip, port) {
		return outbound{Route: routeDirect, Protocol: protocolTCP}
	}
	dst, ok := v.endpointAt(ip)
	if !ok {
		return outbound{Route: routeDirect, Protocol: protocolTCP}
	}
	for _, s := range v.services {
		proto, declared := s.Ports[port]
		if !s.Headless || !declared || proto == protocolUDP || !s.selects(dst) {
			continue
		}
		o := outbound{Route: routeMTLS, Protocol: proto, Dst: dst, Service: s.Namespace + "/" + s.Name}
		if v.autoMTLSOff(s) {
			o.Route = routePlain
		}
		return o
	}
	return outbound{Route: routeDirect, Protocol: protocolTCP}
}

// autoMTLSOff: a client sends plaintext to every pod of the headless
// Service s.
func (v *meshView) autoMTLSOff(s meshService) bool {
	for _, e := range v.endpoints {
		if s.selects(e) && !e.injected() {
			return true
		}
	}
	return effectiveMode(v.policies, s.Namespace, nil, 0) == ModeDisable
}
