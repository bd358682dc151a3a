package jetstream

import (
	"strings"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// objectStoreStreamPrefix is how nats.go names an object store's stream.
const objectStoreStreamPrefix = "OBJ_"

// ObjectStoreConfig translates an ObjectStore spec into the bucket config
// nats.go turns into the OBJ_<bucket> stream. Every field is sent, zero
// included; empty fields with a CRD default get it (storage file,
// replicas 1).
func ObjectStoreConfig(s *v1alpha1.ObjectStoreSpec) (js.ObjectStoreConfig, error) {
	var d decoder
	c := js.ObjectStoreConfig{
		Bucket:      s.Bucket,
		Description: s.Description,
		TTL:         d.duration("spec.ttl", s.TTL),
		MaxBytes:    s.MaxBytes,
		Storage:     storageEnum("spec.storage").toServer(&d, string(s.Storage)),
		Replicas:    replicasOr1(s.Replicas),
		Placement:   placementToServer(s.Placement),
		Compression: s.Compression,
		Metadata:    cloneMetadata(s.Metadata),
	}
	if err := d.err(); err != nil {
		return js.ObjectStoreConfig{}, err
	}
	return c, nil
}

// ObjectStoreSpecFrom translates a bucket config into a spec. Target and
// Lifecycle are left zero.
func ObjectStoreSpecFrom(c js.ObjectStoreConfig) v1alpha1.ObjectStoreSpec {
	return v1alpha1.ObjectStoreSpec{
		Bucket:      c.Bucket,
		Description: c.Description,
		TTL:         formatDuration(c.TTL),
		MaxBytes:    c.MaxBytes,
		Storage:     v1alpha1.StorageType(storageEnum("spec.storage").toSpec(c.Storage)),
		Replicas:    c.Replicas,
		Placement:   placementToSpec(c.Placement),
		Compression: c.Compression,
		Metadata:    cloneMetadata(c.Metadata),
	}
}

// ObjectStoreConfigFromStream reads a bucket config back from the config
// of its OBJ_<bucket> stream (js.Stream(ctx, "OBJ_"+bucket) then Info).
// nats.go offers no ObjectStoreStatus.Config(), unlike KeyValueStatus.
// It is the inverse of what nats.go's CreateObjectStore sends.
func ObjectStoreConfigFromStream(c js.StreamConfig) js.ObjectStoreConfig {
	return js.ObjectStoreConfig{
		Bucket:      strings.TrimPrefix(c.Name, objectStoreStreamPrefix),
		Description: c.Description,
		TTL:         c.MaxAge,
		MaxBytes:    c.MaxBytes,
		Storage:     c.Storage,
		Replicas:    c.Replicas,
		Placement:   clonePlacement(c.Placement),
		Compression: c.Compression != js.NoCompression,
		Metadata:    cloneMetadata(c.Metadata),
	}
}
