package manager

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// TestPublishedAPIServer: the kubernetes Service's ClusterIPs and its
// endpoints are what the target policy refuses, as they are now; a part
// that cannot be read keeps what was read before. Catches the careless
// variant of main before issue 17, which knew only the configured host and
// KUBERNETES_SERVICE_HOST: the endpoints (the control plane's own
// addresses) were dialable.
func TestPublishedAPIServer(t *testing.T) {
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
	w := &publishedAPIServer{reader: c}
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

// TestPublishedAPIServerReadsOnceAndNeverHoldsALaterDial: many dials at
// once make one reading; the first dials wait for it (nothing is known to
// refuse before), while a dial that finds the reading stale goes on with
// the last one as the next reading hangs. Catches the careless variant of
// session 6, where every dial that saw a stale reading read again itself
// (a request per concurrent dial) and waited for it (up to 5 s a dial).
func TestPublishedAPIServerReadsOnceAndNeverHoldsALaterDial(t *testing.T) {
	svc, es := kubernetesService("10.96.0.1"), kubernetesSlice("172.18.0.2")
	var serviceReads atomic.Int32
	release := make(chan struct{})
	var hang atomic.Bool
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(svc, es).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Service); ok {
				serviceReads.Add(1)
				if hang.Load() {
					<-release
				}
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	p := &publishedAPIServer{reader: c}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got, want := p.Addrs(), addrs("10.96.0.1", "172.18.0.2"); !slices.Equal(got, want) {
				t.Errorf("a first dial got %v, want %v", got, want)
			}
		}()
	}
	wg.Wait()
	if n := serviceReads.Load(); n != 1 {
		t.Fatalf("8 concurrent first dials made %d readings, want 1", n)
	}

	// Stale, and the API server hangs: dials go on with the last reading.
	hang.Store(true)
	p.mu.Lock()
	p.readAt = time.Now().Add(-2 * apiServerRefresh)
	p.mu.Unlock()
	done := make(chan []netip.Addr)
	go func() { p.Addrs(); done <- p.Addrs() }()
	select {
	case got := <-done:
		if want := addrs("10.96.0.1", "172.18.0.2"); !slices.Equal(got, want) {
			t.Errorf("a dial during a hung reading got %v, want the last reading %v", got, want)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("a dial waited for a stale reading")
	}
	// The one reading they started runs in the background: wait for it to
	// reach the API server (it hangs there), then count.
	for deadline := time.Now().Add(5 * time.Second); serviceReads.Load() < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := serviceReads.Load(); n != 2 {
		t.Errorf("two stale dials made %d readings in all, want 2 (one more)", n)
	}
	close(release)
}
