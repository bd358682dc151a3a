package jetstream

import (
	"context"
	"errors"

	js "github.com/nats-io/nats.go/jetstream"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// Key-value and object store buckets are streams underneath (KV_<bucket>,
// OBJ_<bucket>); the reconciler observes them through that stream, whose
// configuration holds every bucket option and the owner mark.

// KeyValueKind is the KeyValue kind.
type KeyValueKind struct{}

var _ Kind[*v1alpha1.KeyValue, js.KeyValueConfig] = KeyValueKind{}

func (KeyValueKind) Name() string               { return "KeyValue" }
func (KeyValueKind) NewList() client.ObjectList { return &v1alpha1.KeyValueList{} }
func (KeyValueKind) New() *v1alpha1.KeyValue    { return &v1alpha1.KeyValue{} }
func (KeyValueKind) Address(k *v1alpha1.KeyValue) Address {
	return Address{Stream: "KV_" + k.Spec.Bucket}
}
func (KeyValueKind) ServerName(k *v1alpha1.KeyValue) string { return k.Spec.Bucket }

func (KeyValueKind) Desired(k *v1alpha1.KeyValue, owner string) (js.KeyValueConfig, error) {
	cfg, err := KeyValueConfig(&k.Spec)
	cfg.Metadata = withOwner(cfg.Metadata, owner)
	return cfg, err
}

func (k KeyValueKind) Observe(ctx context.Context, j js.JetStream, kv *v1alpha1.KeyValue) (Observed, error) {
	return observeBacking(ctx, j, k.Address(kv).Stream)
}

func (k KeyValueKind) Create(ctx context.Context, j js.JetStream, kv *v1alpha1.KeyValue, cfg js.KeyValueConfig) (Observed, error) {
	if _, err := j.CreateKeyValue(ctx, cfg); err != nil {
		return Observed{}, err
	}
	return observeBacking(ctx, j, k.Address(kv).Stream)
}

func (k KeyValueKind) Update(ctx context.Context, j js.JetStream, kv *v1alpha1.KeyValue, cfg js.KeyValueConfig) (Observed, error) {
	if _, err := j.UpdateKeyValue(ctx, cfg); err != nil {
		return Observed{}, err
	}
	return observeBacking(ctx, j, k.Address(kv).Stream)
}

func (KeyValueKind) Delete(ctx context.Context, j js.JetStream, kv *v1alpha1.KeyValue) error {
	err := j.DeleteKeyValue(ctx, kv.Spec.Bucket)
	if errors.Is(err, js.ErrBucketNotFound) || errors.Is(err, js.ErrStreamNotFound) {
		return nil
	}
	return err
}

// ObjectStoreKind is the ObjectStore kind.
type ObjectStoreKind struct{}

var _ Kind[*v1alpha1.ObjectStore, js.ObjectStoreConfig] = ObjectStoreKind{}

func (ObjectStoreKind) Name() string               { return "ObjectStore" }
func (ObjectStoreKind) NewList() client.ObjectList { return &v1alpha1.ObjectStoreList{} }
func (ObjectStoreKind) New() *v1alpha1.ObjectStore { return &v1alpha1.ObjectStore{} }
func (ObjectStoreKind) Address(o *v1alpha1.ObjectStore) Address {
	return Address{Stream: "OBJ_" + o.Spec.Bucket}
}
func (ObjectStoreKind) ServerName(o *v1alpha1.ObjectStore) string { return o.Spec.Bucket }

func (ObjectStoreKind) Desired(o *v1alpha1.ObjectStore, owner string) (js.ObjectStoreConfig, error) {
	cfg, err := ObjectStoreConfig(&o.Spec)
	cfg.Metadata = withOwner(cfg.Metadata, owner)
	return cfg, err
}

func (k ObjectStoreKind) Observe(ctx context.Context, j js.JetStream, o *v1alpha1.ObjectStore) (Observed, error) {
	return observeBacking(ctx, j, k.Address(o).Stream)
}

func (k ObjectStoreKind) Create(ctx context.Context, j js.JetStream, o *v1alpha1.ObjectStore, cfg js.ObjectStoreConfig) (Observed, error) {
	if _, err := j.CreateObjectStore(ctx, cfg); err != nil {
		return Observed{}, err
	}
	return observeBacking(ctx, j, k.Address(o).Stream)
}

func (k ObjectStoreKind) Update(ctx context.Context, j js.JetStream, o *v1alpha1.ObjectStore, cfg js.ObjectStoreConfig) (Observed, error) {
	if _, err := j.UpdateObjectStore(ctx, cfg); err != nil {
		return Observed{}, err
	}
	return observeBacking(ctx, j, k.Address(o).Stream)
}

func (ObjectStoreKind) Delete(ctx context.Context, j js.JetStream, o *v1alpha1.ObjectStore) error {
	err := j.DeleteObjectStore(ctx, o.Spec.Bucket)
	if errors.Is(err, js.ErrBucketNotFound) || errors.Is(err, js.ErrStreamNotFound) {
		return nil
	}
	return err
}

// observeBacking reads the stream behind a bucket.
func observeBacking(ctx context.Context, j js.JetStream, stream string) (Observed, error) {
	st, err := j.Stream(ctx, stream)
	if errors.Is(err, js.ErrStreamNotFound) {
		return Observed{}, ErrNotFound
	}
	if err != nil {
		return Observed{}, err
	}
	return observedStream(st.CachedInfo()), nil
}
