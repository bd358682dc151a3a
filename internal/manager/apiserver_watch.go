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

// apiServerRefresh is how often the API server's addresses are read
// again: they change only when the control plane does.
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
}

// Addrs are the addresses known now.
func (w *apiServerWatch) Addrs() []netip.Addr {
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

// Start refreshes until ctx ends; the manager runs it.
func (w *apiServerWatch) Start(ctx context.Context) error {
	t := time.NewTicker(apiServerRefresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := w.refresh(ctx); err != nil && ctx.Err() == nil {
				log.Info("reading the API server's addresses", "error", err.Error())
			}
		}
	}
}

// NeedLeaderElection: every replica keeps the list (any may dial once
// it leads).
func (w *apiServerWatch) NeedLeaderElection() bool { return false }

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
