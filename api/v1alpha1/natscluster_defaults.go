package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// Defaults that the CRD's markers also declare. `kubenats render` has no API
// server to apply them, so render calls WithDefaults; an envtest case checks
// that the API server and this function agree.
const (
	DefaultReplicas      int32 = 3
	DefaultVersion             = "2.15.3"
	DefaultFileStoreSize       = "10Gi"
	DefaultAppUser             = "nats"
)

// WithDefaults returns a copy of c with every unset field defaulted as the
// API server would default it.
func (c *NatsCluster) WithDefaults() *NatsCluster {
	out := c.DeepCopy()
	s := &out.Spec
	if s.Replicas == nil {
		s.Replicas = ptr.To(DefaultReplicas)
	}
	if s.Version == "" {
		s.Version = DefaultVersion
	}
	if s.Auth.Mode == "" {
		s.Auth.Mode = AuthUsers
	}
	if s.Auth.SecretRef != nil && s.Auth.SecretRef.Key == "" {
		s.Auth.SecretRef.Key = "password"
	}
	if s.TLS.Routes.Enabled == nil {
		s.TLS.Routes.Enabled = ptr.To(true)
	}
	if r := s.TLS.Routes.IssuerRef; r != nil {
		s.TLS.Routes.IssuerRef = r.withDefaults()
	}
	if s.TLS.Client == nil {
		s.TLS.Client = &ClientTLSSpec{}
	}
	if ct := s.TLS.Client; ct.IssuerRef != nil {
		ct.IssuerRef = ct.IssuerRef.withDefaults()
	}
	if m := s.TLS.Monitor; m != nil && m.Enabled == nil {
		m.Enabled = ptr.To(true)
	}
	if s.JetStream.Enabled == nil {
		s.JetStream.Enabled = ptr.To(true)
	}
	if s.JetStream.BalanceLeaders == nil {
		s.JetStream.BalanceLeaders = ptr.To(true)
	}
	if s.JetStream.ZoneSpread == "" {
		s.JetStream.ZoneSpread = ZoneSpreadAuto
	}
	if m := s.IstioMesh(); m != nil {
		if m.MTLS == "" {
			m.MTLS = MeshMTLSStrict
		}
		if m.Rollback == "" {
			m.Rollback = MeshRollbackReport
		}
	}
	if m := s.Monitoring; m != nil {
		if m.PodMonitor.Enabled == nil {
			m.PodMonitor.Enabled = ptr.To(true)
		}
		if m.PodMonitor.Interval == "" {
			m.PodMonitor.Interval = DefaultMonitoringInterval
		}
		if m.MaxSeriesPerServer == 0 {
			m.MaxSeriesPerServer = DefaultMaxSeriesPerServer
		}
	}
	s.WebSocket.withDefaults()
	s.MQTT.withDefaults()
	fs := &s.JetStream.FileStore
	if fs.Size == nil {
		q := resource.MustParse(DefaultFileStoreSize)
		fs.Size = &q
	}
	if fs.PVCRetentionPolicy == "" {
		fs.PVCRetentionPolicy = PVCRetain
	}
	return out
}

// JetStreamEnabled reports whether JetStream is on (the default).
func (s *NatsClusterSpec) JetStreamEnabled() bool {
	return s.JetStream.Enabled == nil || *s.JetStream.Enabled
}

// ReplicaCount is spec.replicas, defaulted.
func (s *NatsClusterSpec) ReplicaCount() int32 {
	if s.Replicas == nil {
		return DefaultReplicas
	}
	return *s.Replicas
}

// AppUser is the application user's name in mode users.
func (a *AuthSpec) AppUser() string {
	if a.User == "" {
		return DefaultAppUser
	}
	return a.User
}

// withDefaults is a copy of r with the kind and group defaulted.
func (r *IssuerRef) withDefaults() *IssuerRef {
	out := *r
	if out.Kind == "" {
		out.Kind = "Issuer"
	}
	if out.Group == "" {
		out.Group = "cert-manager.io"
	}
	return &out
}
