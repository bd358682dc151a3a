package jetstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// The translation rule for every field: spec -> server maps the zero value
// to the zero value (never to "leave as is"), because the operator sends the
// whole config on every update and the server replaces its config with it.
// The only exceptions are the CRD defaults, which spec -> server applies too
// so that a spec built in Go without the API server behaves the same.

// decoder gathers the errors of one spec -> server translation so a spec
// with several bad fields names all of them at once.
type decoder struct {
	errs []error
}

func (d *decoder) duration(field string, v v1alpha1.Duration) time.Duration {
	out, err := parseDuration(field, v)
	if err != nil {
		d.errs = append(d.errs, err)
	}
	return out
}

// durationOr is duration for a field with a CRD default: the empty string
// is def.
func (d *decoder) durationOr(field string, v v1alpha1.Duration, def time.Duration) time.Duration {
	if v == "" {
		return def
	}
	return d.duration(field, v)
}

func (d *decoder) err() error { return errors.Join(d.errs...) }

// enumValue is what the nats.go enums are made of.
type enumValue interface{ ~int | ~uint8 }

// enumName is one spec spelling of a server enum value.
type enumName[T enumValue] struct {
	name  string
	value T
}

// enum is the spec spelling of a server enum. Spec -> server looks the
// name up; server -> spec writes the first name listed for the value, so
// list the canonical name before aliases. The empty string (unset) is an
// alias of the CRD default and comes last; for a field without a CRD
// default it is the canonical name of the zero value and comes first.
type enum[T enumValue] struct {
	field string
	names []enumName[T]
}

func (e enum[T]) toServer(d *decoder, name string) T {
	for _, n := range e.names {
		if n.name == name {
			return n.value
		}
	}
	var want []string
	for _, n := range e.names {
		if n.name != "" {
			want = append(want, n.name)
		}
	}
	d.errs = append(d.errs, fmt.Errorf("%s: unknown value %q, want one of %s", e.field, name, strings.Join(want, ", ")))
	var zero T
	return zero
}

// toSpec names a server value. A value the spec cannot express (one a
// newer server or client added) is written with its wire name, or as
// unknown(N), so it shows as drift and reads back as an error instead of
// being mistaken for a default.
func (e enum[T]) toSpec(v T) string {
	for _, n := range e.names {
		if n.value == v {
			return n.name
		}
	}
	if b, err := json.Marshal(v); err == nil {
		var s string
		if json.Unmarshal(b, &s) == nil && s != "" {
			return s
		}
	}
	return fmt.Sprintf("unknown(%d)", v)
}

var (
	retentionEnum = enum[js.RetentionPolicy]{field: "spec.retention", names: []enumName[js.RetentionPolicy]{
		{"limits", js.LimitsPolicy},
		{"interest", js.InterestPolicy},
		{"workqueue", js.WorkQueuePolicy},
		{"", js.LimitsPolicy},
	}}
	discardEnum = enum[js.DiscardPolicy]{field: "spec.discard", names: []enumName[js.DiscardPolicy]{
		{"old", js.DiscardOld},
		{"new", js.DiscardNew},
		{"", js.DiscardOld},
	}}
	compressionEnum = enum[js.StoreCompression]{field: "spec.compression", names: []enumName[js.StoreCompression]{
		{"none", js.NoCompression},
		{"s2", js.S2Compression},
		{"", js.NoCompression},
	}}
	// persistMode has no CRD default, so the default mode reads back as ""
	// and a spec without the field round-trips.
	persistModeEnum = enum[js.PersistModeType]{field: "spec.persistMode", names: []enumName[js.PersistModeType]{
		{"", js.DefaultPersistMode},
		{"default", js.DefaultPersistMode},
		{"async", js.AsyncPersistMode},
	}}
	deliverPolicyEnum = enum[js.DeliverPolicy]{field: "spec.deliverPolicy", names: []enumName[js.DeliverPolicy]{
		{"all", js.DeliverAllPolicy},
		{"last", js.DeliverLastPolicy},
		{"new", js.DeliverNewPolicy},
		{"byStartSequence", js.DeliverByStartSequencePolicy},
		{"byStartTime", js.DeliverByStartTimePolicy},
		{"lastPerSubject", js.DeliverLastPerSubjectPolicy},
		{"", js.DeliverAllPolicy},
	}}
	// ackPolicy: the server's fourth policy, flow_control (nats-server
	// 2.14), is not in the API enum; it reads back as "flow_control".
	ackPolicyEnum = enum[js.AckPolicy]{field: "spec.ackPolicy", names: []enumName[js.AckPolicy]{
		{"explicit", js.AckExplicitPolicy},
		{"all", js.AckAllPolicy},
		{"none", js.AckNonePolicy},
		{"flow_control", js.AckFlowControlPolicy},
		{"", js.AckExplicitPolicy},
	}}
	replayPolicyEnum = enum[js.ReplayPolicy]{field: "spec.replayPolicy", names: []enumName[js.ReplayPolicy]{
		{"instant", js.ReplayInstantPolicy},
		{"original", js.ReplayOriginalPolicy},
		{"", js.ReplayInstantPolicy},
	}}
	// priorityPolicy has no CRD default: none reads back as "".
	priorityPolicyEnum = enum[js.PriorityPolicy]{field: "spec.priorityPolicy", names: []enumName[js.PriorityPolicy]{
		{"", js.PriorityPolicyNone},
		{"none", js.PriorityPolicyNone},
		{"overflow", js.PriorityPolicyOverflow},
		{"pinned_client", js.PriorityPolicyPinned},
		{"prioritized", js.PriorityPolicyPrioritized},
	}}
)

// storageEnum is per kind only for the field name in errors.
func storageEnum(field string) enum[js.StorageType] {
	return enum[js.StorageType]{field: field, names: []enumName[js.StorageType]{
		{"file", js.FileStorage},
		{"memory", js.MemoryStorage},
		{"", js.FileStorage},
	}}
}

// replicasOr1 applies the CRD default of 1 replica to streams and buckets.
func replicasOr1(n int) int {
	if n == 0 {
		return 1
	}
	return n
}

// cloneStrings copies a list; empty is nil both ways, so an emptied list
// is left out of the JSON and reaches the server as empty.
func cloneStrings(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	return slices.Clone(in)
}

// cloneMetadata copies metadata; empty is nil both ways.
func cloneMetadata(in map[string]string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	return maps.Clone(in)
}

func timeToServer(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	out := t.UTC()
	return &out
}

func timeToSpec(t *time.Time) *metav1.Time {
	if t == nil {
		return nil
	}
	out := metav1.NewTime(*t)
	return &out
}

func placementToServer(p *v1alpha1.Placement) *js.Placement {
	if p == nil {
		return nil
	}
	return &js.Placement{Cluster: p.Cluster, Tags: cloneStrings(p.Tags)}
}

func placementToSpec(p *js.Placement) *v1alpha1.Placement {
	if p == nil {
		return nil
	}
	return &v1alpha1.Placement{Cluster: p.Cluster, Tags: cloneStrings(p.Tags)}
}

func republishToServer(r *v1alpha1.Republish) *js.RePublish {
	if r == nil {
		return nil
	}
	return &js.RePublish{Source: r.Source, Destination: r.Destination, HeadersOnly: r.HeadersOnly}
}

func republishToSpec(r *js.RePublish) *v1alpha1.Republish {
	if r == nil {
		return nil
	}
	return &v1alpha1.Republish{Source: r.Source, Destination: r.Destination, HeadersOnly: r.HeadersOnly}
}

func transformsToServer(in []v1alpha1.SubjectTransform) []js.SubjectTransformConfig {
	if len(in) == 0 {
		return nil
	}
	out := make([]js.SubjectTransformConfig, len(in))
	for i, t := range in {
		out[i] = js.SubjectTransformConfig{Source: t.Source, Destination: t.Dest}
	}
	return out
}

func transformsToSpec(in []js.SubjectTransformConfig) []v1alpha1.SubjectTransform {
	if len(in) == 0 {
		return nil
	}
	out := make([]v1alpha1.SubjectTransform, len(in))
	for i, t := range in {
		out[i] = v1alpha1.SubjectTransform{Source: t.Source, Dest: t.Destination}
	}
	return out
}

// sourceToServer maps a mirror or source. The external prefixes become
// one External block when either is set.
//
// Not mapped: StreamSource.Domain, a client-side shorthand nats.go turns
// into External before sending.
func sourceToServer(s v1alpha1.StreamSource) *js.StreamSource {
	out := &js.StreamSource{
		Name:              s.Name,
		OptStartSeq:       s.OptStartSeq,
		OptStartTime:      timeToServer(s.OptStartTime),
		FilterSubject:     s.FilterSubject,
		SubjectTransforms: transformsToServer(s.SubjectTransforms),
	}
	if s.ExternalAPIPrefix != "" || s.ExternalDeliverPrefix != "" {
		out.External = &js.ExternalStream{APIPrefix: s.ExternalAPIPrefix, DeliverPrefix: s.ExternalDeliverPrefix}
	}
	if s.Consumer != nil {
		out.Consumer = &js.StreamConsumerSource{Name: s.Consumer.Name, DeliverSubject: s.Consumer.DeliverSubject}
	}
	return out
}

func sourceToSpec(s *js.StreamSource) v1alpha1.StreamSource {
	out := v1alpha1.StreamSource{
		Name:              s.Name,
		OptStartSeq:       s.OptStartSeq,
		OptStartTime:      timeToSpec(s.OptStartTime),
		FilterSubject:     s.FilterSubject,
		SubjectTransforms: transformsToSpec(s.SubjectTransforms),
	}
	if s.External != nil {
		out.ExternalAPIPrefix = s.External.APIPrefix
		out.ExternalDeliverPrefix = s.External.DeliverPrefix
	}
	if s.Consumer != nil {
		out.Consumer = &v1alpha1.SourceConsumer{Name: s.Consumer.Name, DeliverSubject: s.Consumer.DeliverSubject}
	}
	return out
}

func mirrorToServer(m *v1alpha1.StreamSource) *js.StreamSource {
	if m == nil {
		return nil
	}
	return sourceToServer(*m)
}

func mirrorToSpec(m *js.StreamSource) *v1alpha1.StreamSource {
	if m == nil {
		return nil
	}
	out := sourceToSpec(m)
	return &out
}

func sourcesToServer(in []v1alpha1.StreamSource) []*js.StreamSource {
	if len(in) == 0 {
		return nil
	}
	out := make([]*js.StreamSource, len(in))
	for i, s := range in {
		out[i] = sourceToServer(s)
	}
	return out
}

// sourcesToSpec skips nil entries, which the server rejects anyway.
func sourcesToSpec(in []*js.StreamSource) []v1alpha1.StreamSource {
	var out []v1alpha1.StreamSource
	for _, s := range in {
		if s != nil {
			out = append(out, sourceToSpec(s))
		}
	}
	return out
}

func clonePlacement(p *js.Placement) *js.Placement {
	if p == nil {
		return nil
	}
	return &js.Placement{Cluster: p.Cluster, Tags: cloneStrings(p.Tags)}
}
