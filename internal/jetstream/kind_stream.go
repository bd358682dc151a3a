package jetstream

import (
	"context"
	"errors"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// StreamKind is the Stream kind.
type StreamKind struct{}

var _ Kind[*v1alpha1.Stream, js.StreamConfig] = StreamKind{}

func (StreamKind) Name() string                         { return "Stream" }
func (StreamKind) NewList() client.ObjectList           { return &v1alpha1.StreamList{} }
func (StreamKind) New() *v1alpha1.Stream                { return &v1alpha1.Stream{} }
func (StreamKind) Address(s *v1alpha1.Stream) Address   { return Address{Stream: s.Spec.Name} }
func (StreamKind) ServerName(s *v1alpha1.Stream) string { return s.Spec.Name }

func (StreamKind) Desired(s *v1alpha1.Stream, owner string) (js.StreamConfig, error) {
	cfg, err := StreamConfig(&s.Spec)
	cfg.Metadata = withOwner(cfg.Metadata, owner)
	return cfg, err
}

func (StreamKind) Observe(ctx context.Context, j js.JetStream, s *v1alpha1.Stream) (Observed, error) {
	st, err := j.Stream(ctx, s.Spec.Name)
	if errors.Is(err, js.ErrStreamNotFound) {
		return Observed{}, ErrNotFound
	}
	if err != nil {
		return Observed{}, err
	}
	return observedStream(st.CachedInfo()), nil
}

func (StreamKind) Create(ctx context.Context, j js.JetStream, _ *v1alpha1.Stream, cfg js.StreamConfig) (Observed, error) {
	st, err := j.CreateStream(ctx, cfg)
	if err != nil {
		return Observed{}, err
	}
	// The create response holds what this write stored: the operator's
	// own configuration, to which later looks compare the server's. A read
	// after it may already hold another client's edit, which, taken as the
	// operator's own, would never read as drift. The read only adds the
	// Raft group leader, which the create response lacks yet: it spares a
	// second status write when the next look finds it.
	created := observedStream(st.CachedInfo())
	if info, err := st.Info(ctx); err == nil {
		created.Cluster = raftGroup(info.Cluster)
	}
	return created, nil
}

func (StreamKind) Update(ctx context.Context, j js.JetStream, _ *v1alpha1.Stream, cfg js.StreamConfig) (Observed, error) {
	st, err := j.UpdateStream(ctx, cfg)
	if err != nil {
		return Observed{}, err
	}
	return observedStream(st.CachedInfo()), nil
}

func (StreamKind) Delete(ctx context.Context, j js.JetStream, s *v1alpha1.Stream) error {
	err := j.DeleteStream(ctx, s.Spec.Name)
	if errors.Is(err, js.ErrStreamNotFound) {
		return nil
	}
	return err
}

func observedStream(info *js.StreamInfo) Observed {
	cfg := info.Config
	cfg.Metadata = withoutServerMetadata(cfg.Metadata)
	return Observed{Hash: hashConfig(cfg), Owner: cfg.Metadata[OwnerKey], Cluster: raftGroup(info.Cluster), Mirror: mirrorStatus(info.Mirror)}
}

// mirrorStatus is a mirror's lag and last contact, to the second: finer
// would make every pass a status write.
func mirrorStatus(m *js.StreamSourceInfo) *v1alpha1.MirrorStatus {
	if m == nil {
		return nil
	}
	st := &v1alpha1.MirrorStatus{Lag: m.Lag}
	if m.Active >= 0 {
		st.LastContact = m.Active.Round(time.Second).String()
	}
	return st
}
