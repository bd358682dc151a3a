package loopback

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestProxyOf(t *testing.T) {
	proxy := func(env ...corev1.EnvVar) corev1.Container {
		return corev1.Container{Name: istioProxyContainer, Env: env}
	}
	native := func(c corev1.Container) corev1.Container {
		c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		return c
	}
	cases := []struct {
		name        string
		annotation  string
		containers  []corev1.Container
		inits       []corev1.Container
		want        proxySpec
		wantSidecar bool
	}{
		{name: "no proxy", containers: []corev1.Container{{Name: "nats"}}},
		{name: "classic, defaults", containers: []corev1.Container{{Name: "nats"}, proxy()},
			want: proxySpec{drain: defaultDrainDuration}, wantSidecar: true},
		{name: "native", inits: []corev1.Container{{Name: istioInitContainer}, native(proxy())},
			want: proxySpec{native: true, drain: defaultDrainDuration}, wantSidecar: true},
		{name: "an istio-proxy init container that is not restartable is no native sidecar",
			inits: []corev1.Container{proxy()}, want: proxySpec{drain: defaultDrainDuration}, wantSidecar: true},
		{name: "the annotation alone", annotation: "terminationDrainDuration: 45s\nholdApplicationUntilProxyStarts: true\n",
			containers: []corev1.Container{proxy()}, want: proxySpec{drain: 45 * time.Second, hold: true}, wantSidecar: true},
		{name: "PROXY_CONFIG, what pilot-agent reads, wins", annotation: "terminationDrainDuration: 45s\n",
			containers: []corev1.Container{proxy(corev1.EnvVar{Name: "PROXY_CONFIG", Value: `{"terminationDrainDuration":"50s"}`})},
			want:       proxySpec{drain: 50 * time.Second}, wantSidecar: true},
		{name: "malformed values fall back", annotation: "terminationDrainDuration: [\n",
			containers: []corev1.Container{proxy(corev1.EnvVar{Name: "PROXY_CONFIG", Value: `{"terminationDrainDuration":"-3s"}`},
				corev1.EnvVar{Name: "ISTIO_KUBE_APP_PROBERS", Value: `{not json`})},
			want: proxySpec{drain: defaultDrainDuration}, wantSidecar: true},
		{name: "app probers", containers: []corev1.Container{proxy(corev1.EnvVar{Name: "ISTIO_KUBE_APP_PROBERS",
			Value: `{"/app-health/nats/readyz":{"httpGet":{"path":"/healthz","port":8222,"scheme":"HTTP"},"timeoutSeconds":3}}`})},
			want: proxySpec{drain: defaultDrainDuration, probers: map[string]appProber{"/app-health/nats/readyz": {
				HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8222), Scheme: corev1.URISchemeHTTP}, TimeoutSeconds: 3}}},
			wantSidecar: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}},
				Spec: corev1.PodSpec{Containers: tc.containers, InitContainers: tc.inits}}
			if tc.annotation != "" {
				pod.Annotations[istioProxyConfigAnnotation] = tc.annotation
			}
			got, ok := proxyOf(pod)
			if ok != tc.wantSidecar || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("proxyOf = %+v, %v; want %+v, %v", got, ok, tc.want, tc.wantSidecar)
			}
		})
	}
}

func TestPeerAuthenticationOf(t *testing.T) {
	pa := func(spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"namespace": "ns", "name": "p"}, "spec": spec}}
	}
	cases := []struct {
		name    string
		in      *unstructured.Unstructured
		want    PeerAuthentication
		wantErr bool
	}{
		{name: "empty spec: UNSET, namespace-wide", in: pa(map[string]any{}),
			want: PeerAuthentication{Namespace: "ns", Name: "p", Mode: ModeUnset}},
		{name: "selector, mode and port levels", in: pa(map[string]any{
			"selector":      map[string]any{"matchLabels": map[string]any{"app": "nats"}},
			"mtls":          map[string]any{"mode": "STRICT"},
			"portLevelMtls": map[string]any{"8222": map[string]any{"mode": "PERMISSIVE"}},
		}), want: PeerAuthentication{Namespace: "ns", Name: "p", Selector: map[string]string{"app": "nats"},
			Mode: ModeStrict, PortLevel: map[int32]MTLSMode{8222: ModePermissive}}},
		{name: "unknown mode", in: pa(map[string]any{"mtls": map[string]any{"mode": "strict"}}), wantErr: true},
		{name: "port that is no port", in: pa(map[string]any{"portLevelMtls": map[string]any{"70000": map[string]any{"mode": "DISABLE"}}}), wantErr: true},
		{name: "selector of the wrong shape", in: pa(map[string]any{"selector": map[string]any{"matchLabels": "app=nats"}}), wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := peerAuthenticationOf(tc.in)
			if (err != nil) != tc.wantErr || (!tc.wantErr && !reflect.DeepEqual(got, tc.want)) {
				t.Fatalf("peerAuthenticationOf = %+v, %v; want %+v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
	// An invalid object is left out, the others kept, oldest first.
	older, newer, bad := pa(map[string]any{"mtls": map[string]any{"mode": "STRICT"}}), pa(map[string]any{}), pa(map[string]any{"mtls": map[string]any{"mode": "x"}})
	older.SetName("older")
	older.SetCreationTimestamp(metav1.NewTime(time.Unix(100, 0)))
	newer.SetName("newer")
	newer.SetCreationTimestamp(metav1.NewTime(time.Unix(200, 0)))
	got := peerAuthenticationsOf([]any{newer, bad, older}, t.Logf)
	if len(got) != 2 || got[0].Name != "older" || got[1].Name != "newer" {
		t.Fatalf("peerAuthenticationsOf = %+v, want older then newer, the invalid one left out", got)
	}
}
