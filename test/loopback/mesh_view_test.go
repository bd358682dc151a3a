package loopback

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// TestProtocolOf: a Service port's protocol as istiod reads it:
// appProtocol first, then the name's prefix, then the well-known ports;
// anything else is sniffed. Seen failing against the careless variant
// (every port TCP, as the model had it before): 7 rows.
func TestProtocolOf(t *testing.T) {
	cases := []struct {
		name string
		port corev1.ServicePort
		want meshProtocol
	}{
		{"appProtocol tcp", corev1.ServicePort{Name: "client", Port: 4222, AppProtocol: ptr.To("tcp")}, protocolTCP},
		{"appProtocol beats the name", corev1.ServicePort{Name: "http-monitor", Port: 8222, AppProtocol: ptr.To("tcp")}, protocolTCP},
		{"appProtocol tls is TCP", corev1.ServicePort{Name: "cluster", Port: 6222, AppProtocol: ptr.To("tls")}, protocolTCP},
		{"appProtocol https is TCP", corev1.ServicePort{Name: "monitor", Port: 8222, AppProtocol: ptr.To("https")}, protocolTCP},
		{"appProtocol http", corev1.ServicePort{Name: "monitor", Port: 8222, AppProtocol: ptr.To("http")}, protocolHTTP},
		{"kubernetes.io/h2c", corev1.ServicePort{Name: "x", Port: 80, AppProtocol: ptr.To("kubernetes.io/h2c")}, protocolHTTP},
		{"kubernetes.io/wss", corev1.ServicePort{Name: "x", Port: 443, AppProtocol: ptr.To("kubernetes.io/wss")}, protocolTCP},
		{"name prefix tcp-", corev1.ServicePort{Name: "tcp-client", Port: 4222}, protocolTCP},
		{"name prefix http-", corev1.ServicePort{Name: "http-monitor", Port: 8222}, protocolHTTP},
		{"name prefix is case-blind", corev1.ServicePort{Name: "TCP-client", Port: 4222}, protocolTCP},
		{"grpc-web", corev1.ServicePort{Name: "grpc-web-x", Port: 81}, protocolHTTP},
		{"an undeclared name is sniffed", corev1.ServicePort{Name: "client", Port: 4222}, protocolSniffed},
		{"an unknown appProtocol is sniffed", corev1.ServicePort{Name: "tcp-client", Port: 4222, AppProtocol: ptr.To("nats")}, protocolSniffed},
		{"no name, a well-known port", corev1.ServicePort{Port: 3306}, protocolTCP},
		{"UDP", corev1.ServicePort{Name: "tcp-x", Port: 53, Protocol: corev1.ProtocolUDP}, protocolUDP},
	}
	for _, c := range cases {
		if got := protocolOf(c.port); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestCaptureOf: istio-init's arguments as Istio's injector renders them
// from the pod's annotations, read back as istio-iptables applies them.
// Seen failing against the careless model that captures every port
// whatever the annotations: 12 rows.
func TestCaptureOf(t *testing.T) {
	initArgs := func(args ...string) *corev1.Pod {
		base := []string{"istio-iptables", "-p", "15001", "-z", "15006", "-u", "1337", "-m", "REDIRECT",
			"-i", "*", "-x", "", "-b", "*", "-d", "15090,15021,15020"}
		flags := map[string]int{}
		for i := 0; i+1 < len(base); i++ {
			flags[base[i]] = i + 1
		}
		for i := 0; i+1 < len(args); i += 2 {
			if at, ok := flags[args[i]]; ok {
				base[at] = args[i+1]
			} else {
				base = append(base, args[i], args[i+1])
			}
		}
		return &corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: istioInitContainer, Args: base}}}}
	}
	type probe struct {
		inbound  bool
		ip       string
		port     int32
		captured bool
	}
	cases := []struct {
		name   string
		pod    *corev1.Pod
		probes []probe
	}{
		{"defaults: everything captured but the proxy's ports", initArgs(), []probe{
			{true, "", 4222, true}, {true, "", 15020, false}, {false, "10.0.0.1", 6222, true}}},
		{"excludeInboundPorts", initArgs("-d", "15090,15021,15020,8222"), []probe{
			{true, "", 8222, false}, {true, "", 4222, true}}},
		{"includeInboundPorts lists the only captured ports, exclusions aside", initArgs("-b", "4222", "-d", "15090,15021,15020,4222"), []probe{
			{true, "", 4222, true}, {true, "", 6222, false}}},
		{"includeInboundPorts empty: nothing captured", initArgs("-b", ""), []probe{{true, "", 4222, false}}},
		{"excludeOutboundPorts", initArgs("-o", "6222"), []probe{
			{false, "10.0.0.1", 6222, false}, {false, "10.0.0.1", 4222, true}}},
		{"excludeOutboundIPRanges", initArgs("-x", "10.0.0.0/24"), []probe{
			{false, "10.0.0.9", 4222, false}, {false, "10.0.1.9", 4222, true}}},
		{"an excluded range beats an included port", initArgs("-x", "10.0.0.0/24", "-q", "4222"), []probe{
			{false, "10.0.0.9", 4222, false}}},
		{"includeOutboundIPRanges narrows capture", initArgs("-i", "10.0.0.0/24"), []probe{
			{false, "10.0.0.9", 4222, true}, {false, "10.0.1.9", 4222, false}}},
		{"an included port is captured outside the included ranges", initArgs("-i", "10.0.0.0/24", "-q", "6222"), []probe{
			{false, "10.0.1.9", 6222, true}, {false, "10.0.1.9", 4222, false}}},
		{"an excluded port beats an included one", initArgs("-q", "6222", "-o", "6222"), []probe{
			{false, "10.0.0.1", 6222, false}}},
		{"annotations without istio-init (the CNI)", &corev1.Pod{}, []probe{{true, "", 8222, true}}},
	}
	cni := &corev1.Pod{}
	cni.Annotations = map[string]string{annotationExcludeInboundPorts: "8222", annotationExcludeOutboundIPRanges: "10.0.0.0/8"}
	cases = append(cases, struct {
		name   string
		pod    *corev1.Pod
		probes []probe
	}{"annotations read directly with the CNI", cni, []probe{{true, "", 8222, false}, {false, "10.1.2.3", 4222, false}, {true, "", 4222, true}}})
	for _, c := range cases {
		capture := captureOf(c.pod)
		for _, p := range c.probes {
			var got bool
			if p.inbound {
				got = capture.capturesInbound(p.port)
			} else {
				got = capture.capturesOutbound(p.ip, p.port)
			}
			if got != p.captured {
				t.Errorf("%s: inbound %v %s:%d captured %v, want %v", c.name, p.inbound, p.ip, p.port, got, p.captured)
			}
		}
	}
}

// TestOutbound: what a client's sidecar sends. Toward a headless Service
// auto mTLS is all or nothing across the pods it selects, and off when
// the Service's namespace (or the mesh) says DISABLE; only the ports a
// headless Service declares have listeners; an address the view does not
// know leaves as dialed. Seen failing against the careless variant the
// model had (mTLS to any injected pod, per pod): the mixed-Service rows.
func TestOutbound(t *testing.T) {
	injected := map[string]string{"app": "nats", istioTLSModeLabel: "istio"}
	plain := map[string]string{"app": "nats"}
	ep := func(name, ip string, l map[string]string) meshEndpoint {
		return meshEndpoint{Pod: types.NamespacedName{Namespace: "ns", Name: name}, IP: ip, Labels: l, ServiceAccount: "nats", Ports: []int32{4222, 6222, 8222, 9999}}
	}
	headless := meshService{Namespace: "ns", Name: "nats-headless", Headless: true, Selector: map[string]string{"app": "nats"},
		Ports: map[int32]meshProtocol{4222: protocolTCP, 6222: protocolTCP, 8222: protocolHTTP, 7422: protocolSniffed}}
	clusterIP := meshService{Namespace: "ns", Name: "nats", Selector: map[string]string{"app": "nats"},
		Ports: map[int32]meshProtocol{4222: protocolTCP, 9999: protocolTCP}}
	full := []meshEndpoint{ep("nats-0", "10.0.0.1", injected), ep("nats-1", "10.0.0.2", injected)}
	mixed := []meshEndpoint{ep("nats-0", "10.0.0.1", injected), ep("nats-1", "10.0.0.2", plain)}
	disable := []PeerAuthentication{{Namespace: "ns", Mode: ModeDisable}}
	meshDisable := []PeerAuthentication{{Namespace: meshRootNamespace, Mode: ModeDisable}}
	meshStrict := []PeerAuthentication{{Namespace: meshRootNamespace, Mode: ModeStrict}}
	cases := []struct {
		name      string
		policies  []PeerAuthentication
		endpoints []meshEndpoint
		capture   trafficCapture
		ip        string
		port      int32
		want      outboundRoute
		proto     meshProtocol
	}{
		{"every pod injected: mTLS", nil, full, captureAll, "10.0.0.1", 4222, routeMTLS, protocolTCP},
		{"one pod not injected: plaintext to the injected one too", nil, mixed, captureAll, "10.0.0.1", 4222, routePlain, protocolTCP},
		{"one pod not injected: plaintext to it", nil, mixed, captureAll, "10.0.0.2", 6222, routePlain, protocolTCP},
		{"mesh-wide STRICT does not change the client's choice", meshStrict, mixed, captureAll, "10.0.0.1", 4222, routePlain, protocolTCP},
		{"namespace DISABLE: plaintext", disable, full, captureAll, "10.0.0.1", 4222, routePlain, protocolTCP},
		{"mesh DISABLE: plaintext", meshDisable, full, captureAll, "10.0.0.1", 4222, routePlain, protocolTCP},
		{"the HTTP port keeps its protocol", nil, full, captureAll, "10.0.0.1", 8222, routeMTLS, protocolHTTP},
		{"an undeclared protocol is sniffed", nil, full, captureAll, "10.0.0.1", 7422, routeMTLS, protocolSniffed},
		{"a port no headless Service declares: passthrough", nil, full, captureAll, "10.0.0.1", 9999, routeDirect, protocolTCP},
		{"an address the view does not know: passthrough", nil, full, captureAll, "10.0.0.3", 4222, routeDirect, protocolTCP},
		{"an excluded port: uncaptured", nil, full, parseCapture(map[string]string{"-b": "*", "-i": "*", "-o": "4222"}), "10.0.0.1", 4222, routeDirect, protocolTCP},
		{"an excluded range: uncaptured", nil, full, parseCapture(map[string]string{"-b": "*", "-i": "*", "-x": "10.0.0.1/32"}), "10.0.0.1", 4222, routeDirect, protocolTCP},
	}
	for _, c := range cases {
		v := newMeshView(1, c.policies, c.endpoints, []meshService{clusterIP, headless})
		got := v.outbound(c.capture, c.ip, c.port)
		if got.Route != c.want || got.Protocol != c.proto {
			t.Errorf("%s: %s over %s, want %s over %s", c.name, got.Route, got.Protocol, c.want, c.proto)
		}
	}
}
