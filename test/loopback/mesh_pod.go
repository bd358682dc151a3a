package loopback

import (
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// What the loopback kubelet reads from a pod that Istio's injector
// changed: which container is the proxy, how it starts and drains, and the
// application probes its agent serves. Pure functions of the pod.

// Container and port names of Istio's injection template.
const (
	istioProxyContainer      = "istio-proxy"
	istioInitContainer       = "istio-init"
	istioValidationContainer = "istio-validation"
	// istioAgentPort is pilot-agent's status port: the kubelet probes the
	// injector rewrote arrive here (/app-health/<container>/<kind>).
	istioAgentPort = 15020
	// istioEnvoyHealthPort is Envoy's readiness (/healthz/ready), which the
	// proxy container's own probes ask.
	istioEnvoyHealthPort = 15021
	// istioStatusAnnotation is the injector's record of what it added.
	istioStatusAnnotation = "sidecar.istio.io/status"
	// istioProxyConfigAnnotation is a pod's ProxyConfig override.
	istioProxyConfigAnnotation = "proxy.istio.io/config"
	// defaultDrainDuration is ProxyConfig's terminationDrainDuration default.
	defaultDrainDuration = 5 * time.Second
)

// proxySpec is a pod's injected proxy as the kubelet runs it.
type proxySpec struct {
	// native: istio-proxy is an init container with restartPolicy Always
	// (a Kubernetes native sidecar): it starts before the app containers
	// and stops after them.
	native bool
	// hold: holdApplicationUntilProxyStarts, the app container waits for
	// the proxy (the classic sidecar's postStart `pilot-agent wait`).
	hold bool
	// drain is terminationDrainDuration: how long the proxy keeps
	// established connections after its SIGTERM.
	drain time.Duration
	// probers are the app probes the agent runs, by agent path
	// (ISTIO_KUBE_APP_PROBERS).
	probers map[string]appProber
}

// appProber is one entry of ISTIO_KUBE_APP_PROBERS (Istio's inject.Prober).
type appProber struct {
	HTTPGet        *corev1.HTTPGetAction   `json:"httpGet,omitempty"`
	TCPSocket      *corev1.TCPSocketAction `json:"tcpSocket,omitempty"`
	TimeoutSeconds int32                   `json:"timeoutSeconds,omitempty"`
}

// proxyConfig is the part of Istio's ProxyConfig the model obeys, as JSON
// (the proxy's PROXY_CONFIG) or YAML (the pod's annotation).
type proxyConfig struct {
	TerminationDrainDuration        string `json:"terminationDrainDuration,omitempty"`
	HoldApplicationUntilProxyStarts *bool  `json:"holdApplicationUntilProxyStarts,omitempty"`
}

// injectedProxy finds the pod's istio-proxy: a container, or an init
// container (native sidecar). nil when the pod has no sidecar.
func injectedProxy(pod *corev1.Pod) (*corev1.Container, bool) {
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; c.Name == istioProxyContainer {
			return c, c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		}
	}
	if c := findContainer(pod, istioProxyContainer); c != nil {
		return c, false
	}
	return nil, false
}

// proxyOf reads the pod's proxy; ok false for a pod without one. Settings
// come from the proxy's PROXY_CONFIG (what pilot-agent reads: the mesh's
// defaults merged with the pod's annotation by the injector), then from
// the annotation itself, then Istio's defaults. Malformed values fall back
// to the defaults, as a proxy that starts with them would.
func proxyOf(pod *corev1.Pod) (spec proxySpec, ok bool) {
	c, native := injectedProxy(pod)
	if c == nil {
		return proxySpec{}, false
	}
	spec = proxySpec{native: native, drain: defaultDrainDuration}
	var fromEnv, fromAnnotation proxyConfig
	for _, e := range c.Env {
		switch e.Name {
		case "PROXY_CONFIG":
			_ = json.Unmarshal([]byte(e.Value), &fromEnv)
		case "ISTIO_KUBE_APP_PROBERS":
			probers := map[string]appProber{}
			if json.Unmarshal([]byte(e.Value), &probers) == nil {
				spec.probers = probers
			}
		}
	}
	_ = yaml.Unmarshal([]byte(pod.Annotations[istioProxyConfigAnnotation]), &fromAnnotation)
	for _, pc := range []proxyConfig{fromAnnotation, fromEnv} { // the later wins
		if d, err := time.ParseDuration(pc.TerminationDrainDuration); err == nil && d >= 0 {
			spec.drain = d
		}
		if pc.HoldApplicationUntilProxyStarts != nil {
			spec.hold = *pc.HoldApplicationUntilProxyStarts
		}
	}
	return spec, true
}

// workloadOf is what the pod's sidecar knows of it: the ports its app
// containers declare, of which istio-init's rules capture some (every
// one by default, Istio's includeInboundPorts "*").
func workloadOf(pod *corev1.Pod, ip string, spec proxySpec) meshWorkload {
	return meshWorkload{Pod: types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}, IP: ip,
		ServiceAccount: serviceAccountOf(pod), Labels: pod.Labels, AppProbers: spec.probers,
		Ports: tcpPorts(pod), Capture: captureOf(pod)}
}

// isIstioInitContainer: the init containers the injector adds that set up
// traffic capture (istio-init) or check it (istio-validation, with the
// CNI). The model's capture needs no setup: they count as done at once.
func isIstioInitContainer(name string) bool {
	return name == istioInitContainer || name == istioValidationContainer
}
