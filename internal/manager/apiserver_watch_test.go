package manager

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func kubernetesService(ips ...string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"},
		Spec: corev1.ServiceSpec{ClusterIP: ips[0], ClusterIPs: ips}}
}

func kubernetesSlice(addrs ...string) *discoveryv1.EndpointSlice {
	es := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"}, AddressType: discoveryv1.AddressTypeIPv4}
	for _, a := range addrs {
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}})
	}
	return es
}

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

// TestAPIServerWatch: the kubernetes Service's ClusterIPs and its
// endpoints are what the target policy refuses, as they are now; a part
// that cannot be read keeps what was read before. Catches the careless
// variant of main before issue 17, which knew only the configured host and
// KUBERNETES_SERVICE_HOST: the endpoints (the control plane's own
// addresses) were dialable.
func TestAPIServerWatch(t *testing.T) {
	ctx := context.Background()
	svc, es := kubernetesService("10.96.0.1", "fd00:96::1"), kubernetesSlice("172.18.0.2", "172.18.0.3")
	var failSlices bool
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(svc, es).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*discoveryv1.EndpointSlice); ok && failSlices {
				return errors.New("forbidden")
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	w := &apiServerWatch{reader: c}
	if err := w.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := w.Addrs(), addrs("10.96.0.1", "fd00:96::1", "172.18.0.2", "172.18.0.3"); !slices.Equal(got, want) {
		t.Fatalf("Addrs = %v, want %v", got, want)
	}

	// The control plane moves; the slice can no longer be read.
	svc.Spec.ClusterIPs = []string{"10.96.0.10"}
	svc.Spec.ClusterIP = "10.96.0.10"
	if err := c.Update(ctx, svc); err != nil {
		t.Fatal(err)
	}
	failSlices = true
	if err := w.refresh(ctx); err == nil {
		t.Error("refresh hid the failure to read the EndpointSlice")
	}
	if got, want := w.Addrs(), addrs("10.96.0.10", "172.18.0.2", "172.18.0.3"); !slices.Equal(got, want) {
		t.Fatalf("Addrs = %v, want %v (the slice's last reading kept)", got, want)
	}
}

func TestEndpointSliceAddrs(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *discoveryv1.EndpointSlice
		want []netip.Addr
	}{
		{"empty", kubernetesSlice(), nil},
		{"several", kubernetesSlice("192.0.2.1", "192.0.2.2"), addrs("192.0.2.1", "192.0.2.2")},
		{"mapped", kubernetesSlice("::ffff:192.0.2.1"), addrs("192.0.2.1")},
		{"garbage skipped", kubernetesSlice("not-an-ip", "192.0.2.3"), addrs("192.0.2.3")},
	} {
		if got := endpointSliceAddrs(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
