package jetstream

import (
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// KeyValueConfig translates a KeyValue spec into the bucket config nats.go
// turns into the KV_<bucket> stream. Every field is sent, zero included;
// empty fields with a CRD default get it (storage file, replicas 1,
// history 1).
//
// Mirror and source names are passed as written: nats.go adds the KV_
// prefix when it is missing, and the server then holds the prefixed name.
func KeyValueConfig(s *v1alpha1.KeyValueSpec) (js.KeyValueConfig, error) {
	var d decoder
	c := js.KeyValueConfig{
		Bucket:         s.Bucket,
		Description:    s.Description,
		MaxValueSize:   s.MaxValueSize,
		History:        s.History,
		TTL:            d.duration("spec.ttl", s.TTL),
		MaxBytes:       s.MaxBytes,
		Storage:        storageEnum("spec.storage").toServer(&d, string(s.Storage)),
		Replicas:       replicasOr1(s.Replicas),
		Placement:      placementToServer(s.Placement),
		RePublish:      republishToServer(s.Republish),
		Mirror:         mirrorToServer(s.Mirror),
		Sources:        sourcesToServer(s.Sources),
		Compression:    s.Compression,
		LimitMarkerTTL: d.duration("spec.limitMarkerTtl", s.LimitMarkerTTL),
		Metadata:       cloneMetadata(s.Metadata),
	}
	if c.History == 0 {
		c.History = 1
	}
	if err := d.err(); err != nil {
		return js.KeyValueConfig{}, err
	}
	return c, nil
}

// KeyValueSpecFrom translates a bucket config, such as
// KeyValueStatus.Config(), into a spec. Target and Lifecycle are left zero.
func KeyValueSpecFrom(c js.KeyValueConfig) v1alpha1.KeyValueSpec {
	return v1alpha1.KeyValueSpec{
		Bucket:         c.Bucket,
		Description:    c.Description,
		MaxValueSize:   c.MaxValueSize,
		History:        c.History,
		TTL:            formatDuration(c.TTL),
		MaxBytes:       c.MaxBytes,
		Storage:        v1alpha1.StorageType(storageEnum("spec.storage").toSpec(c.Storage)),
		Replicas:       c.Replicas,
		Placement:      placementToSpec(c.Placement),
		Republish:      republishToSpec(c.RePublish),
		Mirror:         mirrorToSpec(c.Mirror),
		Sources:        sourcesToSpec(c.Sources),
		Compression:    c.Compression,
		LimitMarkerTTL: formatDuration(c.LimitMarkerTTL),
		Metadata:       cloneMetadata(c.Metadata),
	}
}
