package natscluster

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// crdCheckEvery is how often the operator asks again whether an optional
// API (Istio's, the Prometheus Operator's) is served: a missing API group
// costs a discovery request per ask, and CRDs installed later are noticed
// within that.
const crdCheckEvery = 30 * time.Second

// CRDProbe tells whether the API server serves Kind at Version, asking the
// RESTMapper at most every crdCheckEvery.
type CRDProbe struct {
	Mapper  meta.RESTMapper
	Kind    schema.GroupKind
	Version string

	mu        sync.Mutex
	installed bool
	checked   time.Time
}

// Installed reports whether the kind is served; a nil probe or one without
// a mapper reads as not installed.
func (p *CRDProbe) Installed() (bool, error) {
	if p == nil || p.Mapper == nil {
		return false, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.checked.IsZero() && time.Since(p.checked) < crdCheckEvery {
		return p.installed, nil
	}
	_, err := p.Mapper.RESTMapping(p.Kind, p.Version)
	switch {
	case meta.IsNoMatchError(err):
		p.installed = false
		// A mapper that cached "no match" keeps saying it until reset.
		if r, ok := p.Mapper.(meta.ResettableRESTMapper); ok {
			r.Reset()
		}
	case err != nil:
		return false, err
	default:
		p.installed = true
	}
	p.checked = time.Now()
	return p.installed, nil
}

// IstioProbe is the probe for Istio's PeerAuthentication v1.
func IstioProbe(m meta.RESTMapper) *CRDProbe {
	return &CRDProbe{Mapper: m, Kind: PeerAuthenticationGroupKind, Version: "v1"}
}

// PrometheusOperatorProbe is the probe for the Prometheus Operator's
// PodMonitor v1.
func PrometheusOperatorProbe(m meta.RESTMapper) *CRDProbe {
	return &CRDProbe{Mapper: m, Kind: PodMonitorGroupKind, Version: "v1"}
}
