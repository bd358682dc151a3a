package jetstream

import (
	"reflect"
	"strings"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// minimalStream is a stream as the API server stores it when only the name
// and subjects are given: CRD defaults filled, durations canonical.
func minimalStream() v1alpha1.StreamSpec {
	return v1alpha1.StreamSpec{
		Name:            "orders",
		Subjects:        []string{"orders.>"},
		Retention:       "limits",
		Discard:         "old",
		Storage:         "file",
		Replicas:        1,
		DuplicateWindow: "2m0s",
		Compression:     "none",
	}
}

// fullStream sets every field the translation carries. It is not a stream
// a server would accept (mirror together with sources and subjects); the
// server tests use valid subsets.
func fullStream() v1alpha1.StreamSpec {
	return v1alpha1.StreamSpec{
		Name:              "orders",
		Description:       "all orders",
		Subjects:          []string{"orders.>", "returns.>"},
		Retention:         "interest",
		MaxConsumers:      10,
		MaxMsgs:           1000,
		MaxBytes:          1 << 20,
		Discard:           "new",
		DiscardPerSubject: true,
		MaxAge:            "24h0m0s",
		MaxMsgsPerSubject: 5,
		MaxMsgSize:        4096,
		Storage:           "memory",
		Replicas:          3,
		NoAck:             true,
		DuplicateWindow:   "1m30s",
		Placement:         &v1alpha1.Placement{Cluster: "east", Tags: []string{"ssd", "az1"}},
		Mirror: &v1alpha1.StreamSource{
			Name:                  "upstream",
			OptStartSeq:           7,
			OptStartTime:          &fixedMeta,
			FilterSubject:         "up.a",
			SubjectTransforms:     []v1alpha1.SubjectTransform{{Source: "up.>", Dest: "down.>"}},
			ExternalAPIPrefix:     "$JS.hub.API",
			ExternalDeliverPrefix: "deliver.hub",
			Consumer:              &v1alpha1.SourceConsumer{Name: "mirror-durable", DeliverSubject: "mirror.deliver"},
		},
		Sources: []v1alpha1.StreamSource{
			{
				Name:                  "a",
				OptStartSeq:           3,
				OptStartTime:          &otherMeta,
				FilterSubject:         "a.>",
				SubjectTransforms:     []v1alpha1.SubjectTransform{{Source: "a.>", Dest: "b.>"}, {Source: "c.*", Dest: "d.{{wildcard(1)}}"}},
				ExternalAPIPrefix:     "$JS.leaf.API",
				ExternalDeliverPrefix: "deliver.leaf",
				Consumer:              &v1alpha1.SourceConsumer{Name: "a-durable", DeliverSubject: "a.deliver"},
			},
			{
				Name:                  "b",
				OptStartSeq:           4,
				OptStartTime:          &fixedMeta,
				FilterSubject:         "b.>",
				SubjectTransforms:     []v1alpha1.SubjectTransform{{Source: "e.>", Dest: "f.>"}},
				ExternalAPIPrefix:     "$JS.other.API",
				ExternalDeliverPrefix: "deliver.other",
				Consumer:              &v1alpha1.SourceConsumer{Name: "b-durable", DeliverSubject: "b.deliver"},
			},
		},
		Sealed:                 true,
		DenyDelete:             true,
		DenyPurge:              true,
		AllowRollup:            true,
		Compression:            "s2",
		FirstSequence:          100,
		SubjectTransform:       &v1alpha1.SubjectTransform{Source: "orders.>", Dest: "stored.>"},
		Republish:              &v1alpha1.Republish{Source: "stored.>", Destination: "repub.>", HeadersOnly: true},
		AllowDirect:            true,
		MirrorDirect:           true,
		ConsumerLimits:         &v1alpha1.ConsumerLimits{InactiveThreshold: "1h0m0s", MaxAckPending: 500},
		Metadata:               map[string]string{"team": "billing", "io.kubenats.owner": "x"},
		AllowMsgTTL:            true,
		SubjectDeleteMarkerTTL: "5m0s",
		AllowMsgCounter:        true,
		AllowAtomicPublish:     true,
		AllowMsgSchedules:      true,
		AllowBatchPublish:      true,
		PersistMode:            "async",
	}
}

// streamWith is the minimal stream changed by f.
func streamWith(f func(*v1alpha1.StreamSpec)) v1alpha1.StreamSpec {
	s := minimalStream()
	f(&s)
	return s
}

// notTranslated are the spec fields that are not on the server (restore
// is where the stream came from, once).
var notTranslated = []string{"cluster", "connection", "account", "preventDelete", "preventUpdate", "adoptExisting", "restore"}

func TestTranslateStreamFullFixtureSetsEveryField(t *testing.T) {
	if zero := zeroFields(fullStream(), notTranslated...); len(zero) > 0 {
		t.Errorf("fullStream leaves fields unset, set them: %v", zero)
	}
}

func TestTranslateStreamRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		spec v1alpha1.StreamSpec
	}{
		{"minimal with defaults", minimalStream()},
		{"every field", fullStream()},
		{"retention limits", streamWith(func(s *v1alpha1.StreamSpec) { s.Retention = "limits" })},
		{"retention interest", streamWith(func(s *v1alpha1.StreamSpec) { s.Retention = "interest" })},
		{"retention workqueue", streamWith(func(s *v1alpha1.StreamSpec) { s.Retention = "workqueue" })},
		{"discard old", streamWith(func(s *v1alpha1.StreamSpec) { s.Discard = "old" })},
		{"discard new", streamWith(func(s *v1alpha1.StreamSpec) { s.Discard = "new" })},
		{"storage file", streamWith(func(s *v1alpha1.StreamSpec) { s.Storage = "file" })},
		{"storage memory", streamWith(func(s *v1alpha1.StreamSpec) { s.Storage = "memory" })},
		{"compression none", streamWith(func(s *v1alpha1.StreamSpec) { s.Compression = "none" })},
		{"compression s2", streamWith(func(s *v1alpha1.StreamSpec) { s.Compression = "s2" })},
		{"persist mode unset", streamWith(func(s *v1alpha1.StreamSpec) { s.PersistMode = "" })},
		{"persist mode async", streamWith(func(s *v1alpha1.StreamSpec) { s.PersistMode = "async" })},
		{"duplicate window zero", streamWith(func(s *v1alpha1.StreamSpec) { s.DuplicateWindow = "0s" })},
		{"sub-second durations", streamWith(func(s *v1alpha1.StreamSpec) {
			s.MaxAge, s.DuplicateWindow = "1m0.5s", "1.5s"
		})},
		{"mirror only name", streamWith(func(s *v1alpha1.StreamSpec) {
			s.Subjects, s.Mirror = nil, &v1alpha1.StreamSource{Name: "up"}
		})},
		{"external api prefix only", streamWith(func(s *v1alpha1.StreamSpec) {
			s.Sources = []v1alpha1.StreamSource{{Name: "a", ExternalAPIPrefix: "$JS.x.API"}}
		})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := StreamConfig(&tc.spec)
			if err != nil {
				t.Fatalf("StreamConfig: %v", err)
			}
			got := StreamSpecFrom(c)
			if !reflect.DeepEqual(got, tc.spec) {
				t.Errorf("spec -> config -> spec changed:\n%s", strings.Join(fieldDiff(tc.spec, got), "\n"))
			}
		})
	}
}

// TestTranslateStreamDefaults checks spec -> server applies what the CRD
// would have defaulted, and only that.
func TestTranslateStreamDefaults(t *testing.T) {
	cases := []struct {
		name string
		spec v1alpha1.StreamSpec
		want js.StreamConfig
	}{{
		name: "empty spec gets the CRD defaults",
		spec: v1alpha1.StreamSpec{Name: "s"},
		want: js.StreamConfig{
			Name: "s", Retention: js.LimitsPolicy, Discard: js.DiscardOld, Storage: js.FileStorage,
			Replicas: 1, Duplicates: 2 * time.Minute, Compression: js.NoCompression,
		},
	}, {
		name: "duplicate window default is capped by a shorter maxAge",
		spec: v1alpha1.StreamSpec{Name: "s", MaxAge: "30s"},
		want: js.StreamConfig{
			Name: "s", Replicas: 1, MaxAge: 30 * time.Second, Duplicates: 30 * time.Second,
		},
	}, {
		name: "an explicit duplicate window is kept",
		spec: v1alpha1.StreamSpec{Name: "s", MaxAge: "30s", DuplicateWindow: "10s"},
		want: js.StreamConfig{
			Name: "s", Replicas: 1, MaxAge: 30 * time.Second, Duplicates: 10 * time.Second,
		},
	}, {
		name: "empty lists and maps are nil",
		spec: v1alpha1.StreamSpec{Name: "s", Subjects: []string{}, Sources: []v1alpha1.StreamSource{}, Metadata: map[string]string{}},
		want: js.StreamConfig{Name: "s", Replicas: 1, Duplicates: 2 * time.Minute},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := StreamConfig(&tc.spec)
			if err != nil {
				t.Fatalf("StreamConfig: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got != want:\n%s", strings.Join(fieldDiff(tc.want, got), "\n"))
			}
		})
	}
}

// TestTranslateStreamSpecFromOddConfigs checks server -> spec on values no
// spec produces: unknown enums are named, not defaulted.
func TestTranslateStreamSpecFromOddConfigs(t *testing.T) {
	cases := []struct {
		name  string
		cfg   js.StreamConfig
		check func(v1alpha1.StreamSpec) bool
	}{
		{"unknown retention", js.StreamConfig{Retention: 9}, func(s v1alpha1.StreamSpec) bool { return s.Retention == "unknown(9)" }},
		{"unknown storage", js.StreamConfig{Storage: 9}, func(s v1alpha1.StreamSpec) bool { return s.Storage == "unknown(9)" }},
		{"zero duplicate window", js.StreamConfig{}, func(s v1alpha1.StreamSpec) bool { return s.DuplicateWindow == "0s" }},
		{"zero max age", js.StreamConfig{}, func(s v1alpha1.StreamSpec) bool { return s.MaxAge == "" }},
		{"nil source entries skipped", js.StreamConfig{Sources: []*js.StreamSource{nil, {Name: "a"}}}, func(s v1alpha1.StreamSpec) bool {
			return len(s.Sources) == 1 && s.Sources[0].Name == "a"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := StreamSpecFrom(tc.cfg); !tc.check(got) {
				t.Errorf("unexpected spec %+v", got)
			}
		})
	}
}

func TestTranslateStreamErrors(t *testing.T) {
	cases := []struct {
		name string
		spec v1alpha1.StreamSpec
		want []string // every one must be in the error
	}{
		{"bad maxAge", streamWith(func(s *v1alpha1.StreamSpec) { s.MaxAge = "1 day" }), []string{"spec.maxAge", `"1 day"`}},
		{"bad duplicateWindow", streamWith(func(s *v1alpha1.StreamSpec) { s.DuplicateWindow = "2x" }), []string{"spec.duplicateWindow"}},
		{"negative duplicateWindow", streamWith(func(s *v1alpha1.StreamSpec) { s.DuplicateWindow = "-1s" }), []string{"spec.duplicateWindow", "negative"}},
		{"bad subjectDeleteMarkerTtl", streamWith(func(s *v1alpha1.StreamSpec) { s.SubjectDeleteMarkerTTL = "5" }), []string{"spec.subjectDeleteMarkerTtl"}},
		{"bad consumerLimits.inactiveThreshold", streamWith(func(s *v1alpha1.StreamSpec) {
			s.ConsumerLimits = &v1alpha1.ConsumerLimits{InactiveThreshold: "soon"}
		}), []string{"spec.consumerLimits.inactiveThreshold"}},
		{"unknown retention", streamWith(func(s *v1alpha1.StreamSpec) { s.Retention = "Limits" }), []string{"spec.retention", `"Limits"`, "limits, interest, workqueue"}},
		{"unknown discard", streamWith(func(s *v1alpha1.StreamSpec) { s.Discard = "oldest" }), []string{"spec.discard"}},
		{"unknown storage", streamWith(func(s *v1alpha1.StreamSpec) { s.Storage = "disk" }), []string{"spec.storage"}},
		{"unknown compression", streamWith(func(s *v1alpha1.StreamSpec) { s.Compression = "gzip" }), []string{"spec.compression"}},
		{"unknown persistMode", streamWith(func(s *v1alpha1.StreamSpec) { s.PersistMode = "sync" }), []string{"spec.persistMode"}},
		{"several at once", streamWith(func(s *v1alpha1.StreamSpec) { s.MaxAge, s.Storage = "x", "disk" }), []string{"spec.maxAge", "spec.storage"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := StreamConfig(&tc.spec)
			if err == nil {
				t.Fatalf("no error, config %+v", c)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if !reflect.DeepEqual(c, js.StreamConfig{}) {
				t.Errorf("a failed translation returned a config: %+v", c)
			}
		})
	}
}
