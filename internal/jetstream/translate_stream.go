package jetstream

import (
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// defaultDuplicateWindow is the CRD default of spec.duplicateWindow and the
// server's own default.
const defaultDuplicateWindow = 2 * time.Minute

// StreamConfig translates a Stream spec into the config sent to the server.
// Every field is sent, zero included, so a field cleared in the spec is
// cleared on the server. Empty fields with a CRD default get that default.
//
// StreamConfig.Template (template_owner) is not mapped: stream templates
// were removed from the server and the field is only ever set by it.
func StreamConfig(s *v1alpha1.StreamSpec) (js.StreamConfig, error) {
	var d decoder
	c := js.StreamConfig{
		Name:                   s.Name,
		Description:            s.Description,
		Subjects:               cloneStrings(s.Subjects),
		Retention:              retentionEnum.toServer(&d, s.Retention),
		MaxConsumers:           s.MaxConsumers,
		MaxMsgs:                s.MaxMsgs,
		MaxBytes:               s.MaxBytes,
		Discard:                discardEnum.toServer(&d, s.Discard),
		DiscardNewPerSubject:   s.DiscardPerSubject,
		MaxAge:                 d.duration("spec.maxAge", s.MaxAge),
		MaxMsgsPerSubject:      s.MaxMsgsPerSubject,
		MaxMsgSize:             s.MaxMsgSize,
		Storage:                storageEnum("spec.storage").toServer(&d, string(s.Storage)),
		Replicas:               replicasOr1(s.Replicas),
		NoAck:                  s.NoAck,
		Placement:              placementToServer(s.Placement),
		Mirror:                 mirrorToServer(s.Mirror),
		Sources:                sourcesToServer(s.Sources),
		Sealed:                 s.Sealed,
		DenyDelete:             s.DenyDelete,
		DenyPurge:              s.DenyPurge,
		AllowRollup:            s.AllowRollup,
		Compression:            compressionEnum.toServer(&d, s.Compression),
		FirstSeq:               s.FirstSequence,
		AllowDirect:            s.AllowDirect,
		MirrorDirect:           s.MirrorDirect,
		Metadata:               cloneMetadata(s.Metadata),
		AllowMsgTTL:            s.AllowMsgTTL,
		SubjectDeleteMarkerTTL: d.duration("spec.subjectDeleteMarkerTtl", s.SubjectDeleteMarkerTTL),
		AllowMsgCounter:        s.AllowMsgCounter,
		AllowAtomicPublish:     s.AllowAtomicPublish,
		AllowMsgSchedules:      s.AllowMsgSchedules,
		PersistMode:            persistModeEnum.toServer(&d, s.PersistMode),
		AllowBatchPublish:      s.AllowBatchPublish,
	}
	// The default window follows the server's rule: 2m, or maxAge when
	// that is shorter, since a window longer than maxAge is refused.
	def := defaultDuplicateWindow
	if c.MaxAge > 0 && c.MaxAge < def {
		def = c.MaxAge
	}
	c.Duplicates = d.durationOr("spec.duplicateWindow", s.DuplicateWindow, def)
	if s.SubjectTransform != nil {
		c.SubjectTransform = &js.SubjectTransformConfig{Source: s.SubjectTransform.Source, Destination: s.SubjectTransform.Dest}
	}
	c.RePublish = republishToServer(s.Republish)
	if l := s.ConsumerLimits; l != nil {
		c.ConsumerLimits = js.StreamConsumerLimits{
			InactiveThreshold: d.duration("spec.consumerLimits.inactiveThreshold", l.InactiveThreshold),
			MaxAckPending:     l.MaxAckPending,
		}
	}
	if err := d.err(); err != nil {
		return js.StreamConfig{}, err
	}
	return c, nil
}

// StreamSpecFrom translates a server stream config into a spec. Target and
// Lifecycle are left zero: they are not on the server.
func StreamSpecFrom(c js.StreamConfig) v1alpha1.StreamSpec {
	s := v1alpha1.StreamSpec{
		Name:                   c.Name,
		Description:            c.Description,
		Subjects:               cloneStrings(c.Subjects),
		Retention:              retentionEnum.toSpec(c.Retention),
		MaxConsumers:           c.MaxConsumers,
		MaxMsgs:                c.MaxMsgs,
		MaxBytes:               c.MaxBytes,
		Discard:                discardEnum.toSpec(c.Discard),
		DiscardPerSubject:      c.DiscardNewPerSubject,
		MaxAge:                 formatDuration(c.MaxAge),
		MaxMsgsPerSubject:      c.MaxMsgsPerSubject,
		MaxMsgSize:             c.MaxMsgSize,
		Storage:                v1alpha1.StorageType(storageEnum("spec.storage").toSpec(c.Storage)),
		Replicas:               c.Replicas,
		NoAck:                  c.NoAck,
		DuplicateWindow:        formatDefaultedDuration(c.Duplicates),
		Placement:              placementToSpec(c.Placement),
		Mirror:                 mirrorToSpec(c.Mirror),
		Sources:                sourcesToSpec(c.Sources),
		Sealed:                 c.Sealed,
		DenyDelete:             c.DenyDelete,
		DenyPurge:              c.DenyPurge,
		AllowRollup:            c.AllowRollup,
		Compression:            compressionEnum.toSpec(c.Compression),
		FirstSequence:          c.FirstSeq,
		Republish:              republishToSpec(c.RePublish),
		AllowDirect:            c.AllowDirect,
		MirrorDirect:           c.MirrorDirect,
		Metadata:               cloneMetadata(c.Metadata),
		AllowMsgTTL:            c.AllowMsgTTL,
		SubjectDeleteMarkerTTL: formatDuration(c.SubjectDeleteMarkerTTL),
		AllowMsgCounter:        c.AllowMsgCounter,
		AllowAtomicPublish:     c.AllowAtomicPublish,
		AllowMsgSchedules:      c.AllowMsgSchedules,
		AllowBatchPublish:      c.AllowBatchPublish,
		PersistMode:            persistModeEnum.toSpec(c.PersistMode),
	}
	if t := c.SubjectTransform; t != nil {
		s.SubjectTransform = &v1alpha1.SubjectTransform{Source: t.Source, Dest: t.Destination}
	}
	if l := c.ConsumerLimits; l != (js.StreamConsumerLimits{}) {
		s.ConsumerLimits = &v1alpha1.ConsumerLimits{
			InactiveThreshold: formatDuration(l.InactiveThreshold),
			MaxAckPending:     l.MaxAckPending,
		}
	}
	return s
}
