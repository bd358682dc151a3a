package jetstream

import (
	"reflect"
	"strings"
	"testing"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

func minimalKeyValue() v1alpha1.KeyValueSpec {
	return v1alpha1.KeyValueSpec{Bucket: "settings", History: 1, Storage: "file", Replicas: 1}
}

// fullKeyValue sets every field; mirror and sources together are not a
// bucket a server would accept.
func fullKeyValue() v1alpha1.KeyValueSpec {
	return v1alpha1.KeyValueSpec{
		Bucket:       "settings",
		Description:  "app settings",
		MaxValueSize: 1024,
		History:      10,
		TTL:          "1h0m0s",
		MaxBytes:     1 << 20,
		Storage:      "memory",
		Replicas:     3,
		Placement:    &v1alpha1.Placement{Cluster: "east", Tags: []string{"ssd"}},
		Republish:    &v1alpha1.Republish{Source: "$KV.settings.>", Destination: "changes.>", HeadersOnly: true},
		Mirror: &v1alpha1.StreamSource{
			Name: "upstream", OptStartSeq: 1, OptStartTime: &fixedMeta, FilterSubject: "$KV.upstream.a",
			SubjectTransforms: []v1alpha1.SubjectTransform{{Source: "$KV.upstream.>", Dest: "$KV.settings.>"}},
			ExternalAPIPrefix: "$JS.hub.API", ExternalDeliverPrefix: "deliver.hub",
			Consumer: &v1alpha1.SourceConsumer{Name: "kv-mirror", DeliverSubject: "kv.mirror.deliver"},
		},
		Sources: []v1alpha1.StreamSource{{
			Name: "other", OptStartSeq: 2, OptStartTime: &otherMeta, FilterSubject: "$KV.other.b",
			SubjectTransforms: []v1alpha1.SubjectTransform{{Source: "$KV.other.>", Dest: "$KV.settings.>"}},
			ExternalAPIPrefix: "$JS.leaf.API", ExternalDeliverPrefix: "deliver.leaf",
			Consumer: &v1alpha1.SourceConsumer{Name: "kv-source", DeliverSubject: "kv.source.deliver"},
		}},
		Compression:    true,
		LimitMarkerTTL: "10m0s",
		Metadata:       map[string]string{"team": "platform"},
	}
}

func keyValueWith(f func(*v1alpha1.KeyValueSpec)) v1alpha1.KeyValueSpec {
	s := minimalKeyValue()
	f(&s)
	return s
}

func TestTranslateKeyValueFullFixtureSetsEveryField(t *testing.T) {
	if zero := zeroFields(fullKeyValue(), notTranslated...); len(zero) > 0 {
		t.Errorf("fullKeyValue leaves fields unset, set them: %v", zero)
	}
}

func TestTranslateKeyValueRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		spec v1alpha1.KeyValueSpec
	}{
		{"minimal with defaults", minimalKeyValue()},
		{"every field", fullKeyValue()},
		{"storage file", keyValueWith(func(s *v1alpha1.KeyValueSpec) { s.Storage = "file" })},
		{"storage memory", keyValueWith(func(s *v1alpha1.KeyValueSpec) { s.Storage = "memory" })},
		{"history 64", keyValueWith(func(s *v1alpha1.KeyValueSpec) { s.History = 64 })},
		{"unlimited sizes", keyValueWith(func(s *v1alpha1.KeyValueSpec) { s.MaxBytes, s.MaxValueSize = -1, -1 })},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := KeyValueConfig(&tc.spec)
			if err != nil {
				t.Fatalf("KeyValueConfig: %v", err)
			}
			got := KeyValueSpecFrom(c)
			if !reflect.DeepEqual(got, tc.spec) {
				t.Errorf("spec -> config -> spec changed:\n%s", strings.Join(fieldDiff(tc.spec, got), "\n"))
			}
		})
	}
}

func TestTranslateKeyValueDefaults(t *testing.T) {
	got, err := KeyValueConfig(&v1alpha1.KeyValueSpec{Bucket: "b"})
	if err != nil {
		t.Fatal(err)
	}
	want := js.KeyValueConfig{Bucket: "b", History: 1, Storage: js.FileStorage, Replicas: 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got != want:\n%s", strings.Join(fieldDiff(want, got), "\n"))
	}
}

func TestTranslateKeyValueErrors(t *testing.T) {
	cases := []struct {
		name string
		spec v1alpha1.KeyValueSpec
		want []string
	}{
		{"bad ttl", keyValueWith(func(s *v1alpha1.KeyValueSpec) { s.TTL = "1d" }), []string{"spec.ttl", `"1d"`}},
		{"bad limitMarkerTtl", keyValueWith(func(s *v1alpha1.KeyValueSpec) { s.LimitMarkerTTL = "x" }), []string{"spec.limitMarkerTtl"}},
		{"unknown storage", keyValueWith(func(s *v1alpha1.KeyValueSpec) { s.Storage = "File" }), []string{"spec.storage", "file, memory"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := KeyValueConfig(&tc.spec)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}
