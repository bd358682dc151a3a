package loopback

import (
	"net/netip"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Which of a pod's connections its sidecar captures, as istio-iptables
// sets the rules up from the arguments Istio's injector renders into the
// istio-init container (from the pod's traffic.sidecar.istio.io/*
// annotations, with the mesh's defaults): -b includeInboundPorts ("*":
// every port), -d excludeInboundPorts (only with "*"; the proxy's own
// ports are always in it), -i includeOutboundIPRanges ("*": every
// address), -x excludeOutboundIPRanges, -q includeOutboundPorts, -o
// excludeOutboundPorts. Outbound, the rules apply in istio-iptables'
// order: an excluded port, then an excluded range, pass uncaptured; an
// included port, then an included range, are captured; the rest passes.
// Uncaptured traffic reaches the app (inbound) or the destination
// (outbound) in plaintext, untouched by any policy.

// trafficCapture is one pod's capture rules.
type trafficCapture struct {
	inboundAll     bool
	inboundPorts   map[int32]bool // with !inboundAll: the only ones captured
	inboundExclude map[int32]bool // with inboundAll
	outboundAll    bool
	outboundRanges []netip.Prefix
	excludeRanges  []netip.Prefix
	includePorts   map[int32]bool
	excludePorts   map[int32]bool
}

// captureAll is what a pod gets without annotations, and what the test
// process's meshed clients get.
var captureAll = trafficCapture{inboundAll: true, outboundAll: true}

// Annotations of the pod that the injector turns into istio-init's
// arguments; read directly when a pod has no istio-init (Istio's CNI).
const (
	annotationIncludeInboundPorts     = "traffic.sidecar.istio.io/includeInboundPorts"
	annotationExcludeInboundPorts     = "traffic.sidecar.istio.io/excludeInboundPorts"
	annotationIncludeOutboundIPRanges = "traffic.sidecar.istio.io/includeOutboundIPRanges"
	annotationExcludeOutboundIPRanges = "traffic.sidecar.istio.io/excludeOutboundIPRanges"
	annotationIncludeOutboundPorts    = "traffic.sidecar.istio.io/includeOutboundPorts"
	annotationExcludeOutboundPorts    = "traffic.sidecar.istio.io/excludeOutboundPorts"
)

// captureOf reads the pod's capture: istio-init's arguments, or the
// annotations with Istio's defaults. Values istio-iptables would refuse
// (a port or range that does not parse) are left out.
func captureOf(pod *corev1.Pod) trafficCapture {
	flags := map[string]string{
		"-b": "*", "-i": "*",
		"-d": pod.Annotations[annotationExcludeInboundPorts],
		"-x": pod.Annotations[annotationExcludeOutboundIPRanges],
		"-q": pod.Annotations[annotationIncludeOutboundPorts],
		"-o": pod.Annotations[annotationExcludeOutboundPorts],
	}
	if v, ok := pod.Annotations[annotationIncludeInboundPorts]; ok {
		flags["-b"] = v
	}
	if v, ok := pod.Annotations[annotationIncludeOutboundIPRanges]; ok {
		flags["-i"] = v
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name != istioInitContainer {
			continue
		}
		args := append(append([]string(nil), c.Command...), c.Args...)
		for i := 0; i+1 < len(args); i++ {
			if _, known := flags[args[i]]; known {
				flags[args[i]] = args[i+1]
				i++
			}
		}
	}
	return parseCapture(flags)
}

// parseCapture turns istio-iptables' flags into rules.
func parseCapture(flags map[string]string) trafficCapture {
	return trafficCapture{
		inboundAll: strings.TrimSpace(flags["-b"]) == "*", inboundPorts: ports(flags["-b"]),
		inboundExclude: ports(flags["-d"]),
		outboundAll:    strings.TrimSpace(flags["-i"]) == "*", outboundRanges: ranges(flags["-i"]),
		excludeRanges: ranges(flags["-x"]),
		includePorts:  ports(flags["-q"]), excludePorts: ports(flags["-o"]),
	}
}

func ports(list string) map[int32]bool {
	out := map[int32]bool{}
	for _, f := range strings.Split(list, ",") {
		if p, err := strconv.ParseUint(strings.TrimSpace(f), 10, 16); err == nil && p > 0 {
			out[int32(p)] = true
		}
	}
	return out
}

func ranges(list string) []netip.Prefix {
	var out []netip.Prefix
	for _, f := range strings.Split(list, ",") {
		if p, err := netip.ParsePrefix(strings.TrimSpace(f)); err == nil {
			out = append(out, p.Masked())
		}
	}
	return out
}

// capturesInbound: a connection to the pod's port goes to its sidecar.
func (c trafficCapture) capturesInbound(port int32) bool {
	if c.inboundAll {
		return !c.inboundExclude[port]
	}
	return c.inboundPorts[port]
}

// capturesOutbound: a connection the app opens to ip:port goes through
// its sidecar.
func (c trafficCapture) capturesOutbound(ip string, port int32) bool {
	if c.excludePorts[port] {
		return false
	}
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	if containsAddr(c.excludeRanges, addr) {
		return false
	}
	return c.includePorts[port] || c.outboundAll || containsAddr(c.outboundRanges, addr)
}

// excludesAddress: no connection to ip is captured, whatever its port
// (the model then leaves the address as it is in the pod's hosts file).
func (c trafficCapture) excludesAddress(ip string) bool {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return true
	}
	if containsAddr(c.excludeRanges, addr) {
		return true
	}
	return !c.outboundAll && len(c.includePorts) == 0 && !containsAddr(c.outboundRanges, addr)
}

func containsAddr(rs []netip.Prefix, a netip.Addr) bool {
	for _, r := range rs {
		if r.Contains(a) {
			return true
		}
	}
	return false
}
