package manager

import (
	"context"
	"net/netip"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var log = ctrl.Log.WithName("manager")

// The kubernetes Service and its EndpointSlice, by name only: all the
// operator reads in default.
// +kubebuilder:rbac:groups="",resources=services,verbs=get,namespace=default,resourceNames=kubernetes
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get,namespace=default,resourceNames=kubernetes

// apiServerRefresh is how old a reading of the API server's addresses may
// be when a dial asks for them: they change only when the control plane
// does. They are read when a dial needs them, never on a timer, so that an
// idle operator makes no API request at all (make bench counts them).
const apiServerRefresh = time.Minute

// apiServerWatch keeps the API server's in-cluster addresses: the
// ClusterIPs of the kubernetes Service in default and the addresses of
// its EndpointSlice (the control plane's own). connection.servers may
// not lead there; an address read once at start would miss a control
// plane replaced since. A part that cannot be read (no RBAC in default, a
// timeout) keeps what was read before.
type apiServerWatch struct {
	reader client.Reader

	mu              sync.Mutex
	service, slices []netip.Addr
	readAt          time.Time // the last attempt, read or not
}

// Addrs are the addresses as read at most apiServerRefresh ago: a dial
// calls it, and reads them again first when the last reading is older.
func (w *apiServerWatch) Addrs() []netip.Addr {
	w.mu.Lock()
	stale := time.Since(w.readAt) > apiServerRefresh
	w.mu.Unlock()
	if stale {
		if err := w.refresh(context.Background()); err != nil {
			log.Info("reading the API server's addresses", "error", err.Error())
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return append(slices.Clip(w.service), w.slices...)
}

// refresh reads both again, returning the first error.
func (w *apiServerWatch) refresh(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	key := client.ObjectKey{Namespace: "default", Name: "kubernetes"}
	var svc corev1.Service
	svcErr := w.reader.Get(ctx, key, &svc)
	var es discoveryv1.EndpointSlice
	esErr := w.reader.Get(ctx, key, &es)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.readAt = time.Now()
	if svcErr == nil {
		w.service = serviceAddrs(&svc)
	}
	if esErr == nil {
		w.slices = endpointSliceAddrs(&es)
	}
	if svcErr != nil {
		return svcErr
	}
	return esErr
}

// serviceAddrs are a Service's ClusterIPs.
func serviceAddrs(s *corev1.Service) []netip.Addr {
	ips := s.Spec.ClusterIPs
	if len(ips) == 0 && s.Spec.ClusterIP != "" {
		ips = []string{s.Spec.ClusterIP}
	}
	return parseAddrs(ips)
}

// endpointSliceAddrs are the addresses of every endpoint of a slice,
// ready or not: a control plane member that is not ready is still one.
func endpointSliceAddrs(es *discoveryv1.EndpointSlice) []netip.Addr {
	var out []netip.Addr
	for _, e := range es.Endpoints {
		out = append(out, parseAddrs(e.Addresses)...)
	}
	return out
}

func parseAddrs(ips []string) []netip.Addr {
	var out []netip.Addr
	for _, ip := range ips {
		if a, err := netip.ParseAddr(ip); err == nil {
			out = append(out, a.Unmap())
		}
	}
	return out
}
