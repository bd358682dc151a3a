package jetstream

import (
	"context"
	"errors"

	js "github.com/nats-io/nats.go/jetstream"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// ConsumerKind is the Consumer kind.
type ConsumerKind struct{}

var _ Kind[*v1alpha1.Consumer, js.ConsumerConfig] = ConsumerKind{}

func (ConsumerKind) Name() string               { return "Consumer" }
func (ConsumerKind) NewList() client.ObjectList { return &v1alpha1.ConsumerList{} }
func (ConsumerKind) New() *v1alpha1.Consumer    { return &v1alpha1.Consumer{} }
func (ConsumerKind) Address(c *v1alpha1.Consumer) Address {
	return Address{Stream: c.Spec.StreamName, Consumer: c.Spec.DurableName}
}
func (ConsumerKind) ServerName(c *v1alpha1.Consumer) string {
	return c.Spec.StreamName + "/" + c.Spec.DurableName
}

func (ConsumerKind) Desired(c *v1alpha1.Consumer, owner string) (js.ConsumerConfig, error) {
	cfg, err := ConsumerConfig(&c.Spec)
	cfg.Metadata = withOwner(cfg.Metadata, owner)
	return cfg, err
}

func (ConsumerKind) Observe(ctx context.Context, j js.JetStream, c *v1alpha1.Consumer) (Observed, error) {
	cons, err := j.Consumer(ctx, c.Spec.StreamName, c.Spec.DurableName)
	switch {
	case errors.Is(err, js.ErrStreamNotFound):
		return Observed{}, ErrStreamNotFound
	case errors.Is(err, js.ErrConsumerNotFound):
		return Observed{}, ErrNotFound
	case err != nil:
		return Observed{}, err
	}
	return observedConsumer(cons.CachedInfo()), nil
}

func (ConsumerKind) Create(ctx context.Context, j js.JetStream, c *v1alpha1.Consumer, cfg js.ConsumerConfig) (Observed, error) {
	cons, err := j.CreateConsumer(ctx, c.Spec.StreamName, cfg)
	if errors.Is(err, js.ErrStreamNotFound) {
		return Observed{}, ErrStreamNotFound
	}
	if err != nil {
		return Observed{}, err
	}
	return observedConsumer(cons.CachedInfo()), nil
}

func (ConsumerKind) Update(ctx context.Context, j js.JetStream, c *v1alpha1.Consumer, cfg js.ConsumerConfig) (Observed, error) {
	cons, err := j.UpdateConsumer(ctx, c.Spec.StreamName, cfg)
	if err != nil {
		return Observed{}, err
	}
	return observedConsumer(cons.CachedInfo()), nil
}

func (ConsumerKind) Delete(ctx context.Context, j js.JetStream, c *v1alpha1.Consumer) error {
	err := j.DeleteConsumer(ctx, c.Spec.StreamName, c.Spec.DurableName)
	if errors.Is(err, js.ErrConsumerNotFound) || errors.Is(err, js.ErrStreamNotFound) {
		return nil
	}
	return err
}

func observedConsumer(info *js.ConsumerInfo) Observed {
	cfg := info.Config
	cfg.Metadata = withoutServerMetadata(cfg.Metadata)
	return Observed{Hash: hashConfig(cfg), Owner: cfg.Metadata[OwnerKey], Cluster: raftGroup(info.Cluster)}
}
