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

// publishedAPIServer keeps the API server's in-cluster addresses as the
// cluster publishes them: the ClusterIPs of the kubernetes Service in
// default and the addresses of its EndpointSlice (the control plane's
// own). connection.servers may not lead there; an address read once at
// start would miss a control plane replaced since. A part that cannot be
// read (no RBAC in default, a timeout) keeps what was read before.
type publishedAPIServer struct {
	reader client.Reader

	mu              sync.Mutex
	service, slices []netip.Addr
	readAt          time.Time     // the end of the last attempt, read or not
	reading         chan struct{} // closed when the reading under way ends; nil when none is
}

// Addrs are the addresses as read at most apiServerRefresh ago. A dial
// calls it: the first dial waits for the first reading (until then
// nothing is known to refuse); a later one that finds the reading stale
// starts one reading in the background and goes on with the last one, so
// that a slow API server neither holds dials for seconds nor gets a
// request per dial.
func (p *publishedAPIServer) Addrs() []netip.Addr {
	p.mu.Lock()
	if time.Since(p.readAt) > apiServerRefresh && p.reading == nil {
		done := make(chan struct{})
		p.reading = done
		go p.read(done)
	}
	first, wait := p.readAt.IsZero(), p.reading
	p.mu.Unlock()
	if first && wait != nil {
		<-wait
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append(slices.Clip(p.service), p.slices...)
}

// read is one reading in the background; done is closed when it ends.
func (p *publishedAPIServer) read(done chan struct{}) {
	defer func() {
		p.mu.Lock()
		p.reading = nil
		p.mu.Unlock()
		close(done)
	}()
	if err := p.refresh(context.Background()); err != nil {
		log.Info("reading the API server's addresses", "error", err.Error())
	}
}

// refresh reads both again, returning the first error.
func (p *publishedAPIServer) refresh(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	key := client.ObjectKey{Namespace: "default", Name: "kubernetes"}
	var svc corev1.Service
	svcErr := p.reader.Get(ctx, key, &svc)
	var es discoveryv1.EndpointSlice
	esErr := p.reader.Get(ctx, key, &es)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.readAt = time.Now()
	if svcErr == nil {
		p.service = serviceAddrs(&svc)
	}
	if esErr == nil {
		p.slices = endpointSliceAddrs(&es)
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
