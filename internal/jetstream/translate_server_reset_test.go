package jetstream

import (
	"strings"
	"testing"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestServerResetToZero is the anchor controller's failure: a field set
// back to zero, false or empty in the spec must be cleared on the server,
// not left as it was. Each kind is created with the fields set, updated
// with the whole translated spec with them cleared, and read back.
func TestServerResetToZero(t *testing.T) {
	j := startJetStream(t)
	ctx := t.Context()

	t.Run("stream", func(t *testing.T) {
		set := v1alpha1.StreamSpec{
			Name:                   "RESET",
			Description:            "x",
			Subjects:               []string{"reset.a", "reset.b"},
			MaxConsumers:           5,
			MaxMsgs:                100,
			MaxBytes:               1 << 20,
			Discard:                "new",
			DiscardPerSubject:      true,
			MaxAge:                 "1h0m0s",
			MaxMsgsPerSubject:      3,
			MaxMsgSize:             1024,
			NoAck:                  true,
			DuplicateWindow:        "1m0s",
			Placement:              &v1alpha1.Placement{Tags: []string{"ssd"}},
			AllowRollup:            true,
			Compression:            "s2",
			SubjectTransform:       &v1alpha1.SubjectTransform{Source: "reset.>", Dest: "kept.>"},
			Republish:              &v1alpha1.Republish{Source: "kept.>", Destination: "repub.>", HeadersOnly: true},
			AllowDirect:            true,
			ConsumerLimits:         &v1alpha1.ConsumerLimits{InactiveThreshold: "1h0m0s", MaxAckPending: 10},
			Metadata:               map[string]string{"k": "v"},
			AllowMsgTTL:            true,
			SubjectDeleteMarkerTTL: "1m0s",
			AllowAtomicPublish:     true,
			AllowBatchPublish:      true,
		}
		sameSpec(t, filledStream(t, set), serverStream(t, j, set))
		// AllowMsgTTL stays: the server refuses to turn it off (see below).
		cleared := v1alpha1.StreamSpec{Name: "RESET", Subjects: []string{"reset.a"}, AllowMsgTTL: true}
		cfg, err := StreamConfig(&cleared)
		if err != nil {
			t.Fatal(err)
		}
		s, err := j.UpdateStream(ctx, cfg)
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		sameSpec(t, filledStream(t, cleared), readStream(t, s))
	})

	t.Run("consumer", func(t *testing.T) {
		serverStream(t, j, v1alpha1.StreamSpec{Name: "RESET_C", Subjects: []string{"rc.>"}})
		set := v1alpha1.ConsumerSpec{
			StreamName:         "RESET_C",
			DurableName:        "reset",
			Description:        "x",
			AckWait:            "1s",
			MaxDeliver:         4,
			Backoff:            []v1alpha1.Duration{"1s", "2s", "3s"},
			FilterSubjects:     []string{"rc.a", "rc.b"},
			SampleFreq:         "10%",
			MaxAckPending:      7,
			HeadersOnly:        true,
			MaxRequestBatch:    5,
			MaxRequestExpires:  "10s",
			MaxRequestMaxBytes: 100,
			InactiveThreshold:  "1h0m0s",
			Replicas:           1,
			Metadata:           map[string]string{"k": "v"},
			PriorityPolicy:     "pinned_client",
			PriorityTimeout:    "1m0s",
			PriorityGroups:     []string{"g"},
		}
		sameSpec(t, filledConsumer(t, set), serverConsumer(t, j, set))
		cleared := v1alpha1.ConsumerSpec{StreamName: "RESET_C", DurableName: "reset"}
		cfg, err := ConsumerConfig(&cleared)
		if err != nil {
			t.Fatal(err)
		}
		c, err := j.UpdateConsumer(ctx, "RESET_C", cfg)
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		sameSpec(t, filledConsumer(t, cleared), readConsumer(t, c, "RESET_C"))
	})

	t.Run("keyvalue", func(t *testing.T) {
		set := v1alpha1.KeyValueSpec{
			Bucket:       "reset",
			Description:  "x",
			MaxValueSize: 100,
			History:      10,
			TTL:          "1h0m0s",
			MaxBytes:     1 << 20,
			Placement:    &v1alpha1.Placement{Tags: []string{"ssd"}},
			Republish:    &v1alpha1.Republish{Source: "$KV.reset.>", Destination: "repub.>"},
			Compression:  true,
			Metadata:     map[string]string{"k": "v"},
		}
		sameSpec(t, filledKeyValue(t, set), serverKeyValue(t, j, set))
		cleared := v1alpha1.KeyValueSpec{Bucket: "reset"}
		cfg, err := KeyValueConfig(&cleared)
		if err != nil {
			t.Fatal(err)
		}
		kv, err := j.UpdateKeyValue(ctx, cfg)
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		sameSpec(t, filledKeyValue(t, cleared), readKeyValue(t, kv))
	})

	t.Run("objectstore", func(t *testing.T) {
		set := v1alpha1.ObjectStoreSpec{
			Bucket:      "reset",
			Description: "x",
			TTL:         "1h0m0s",
			MaxBytes:    1 << 20,
			Placement:   &v1alpha1.Placement{Tags: []string{"ssd"}},
			Compression: true,
			Metadata:    map[string]string{"k": "v"},
		}
		sameSpec(t, filledObjectStore(t, set), serverObjectStore(t, j, set))
		cleared := v1alpha1.ObjectStoreSpec{Bucket: "reset"}
		cfg, err := ObjectStoreConfig(&cleared)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := j.UpdateObjectStore(ctx, cfg); err != nil {
			t.Fatalf("update: %v", err)
		}
		sameSpec(t, filledObjectStore(t, cleared), readObjectStore(t, j, "reset"))
	})

	// Some stream flags are one-way on the server: once set, an update
	// clearing them is refused, and the server keeps them. The API must say
	// so (CEL) or the reconciler must report it; the translation still
	// sends the cleared value, as it should.
	oneWay := []struct {
		name string
		set  func(*v1alpha1.StreamSpec)
		want string // in the server's refusal
	}{
		{"denyDelete", func(s *v1alpha1.StreamSpec) { s.DenyDelete = true }, "can not cancel deny message deletes"},
		{"denyPurge", func(s *v1alpha1.StreamSpec) { s.DenyPurge = true }, "can not cancel deny purge"},
		{"allowMsgTtl", func(s *v1alpha1.StreamSpec) { s.AllowMsgTTL = true }, "message TTL status can not be disabled"},
		{"allowMsgSchedules", func(s *v1alpha1.StreamSpec) { s.AllowMsgSchedules, s.AllowRollup = true, true }, "message schedules can not be disabled"},
		{"allowMsgCounter", func(s *v1alpha1.StreamSpec) { s.AllowMsgCounter = true }, "can not change message counter setting"},
		{"persistMode", func(s *v1alpha1.StreamSpec) { s.PersistMode = "async" }, "can not change persist mode"},
	}
	for i, tc := range oneWay {
		t.Run("one-way "+tc.name, func(t *testing.T) {
			name := "ONEWAY_" + strings.ToUpper(tc.name)
			set := v1alpha1.StreamSpec{Name: name, Subjects: []string{"oneway." + string(rune('a'+i))}}
			tc.set(&set)
			before := serverStream(t, j, set)
			cleared := v1alpha1.StreamSpec{Name: name, Subjects: set.Subjects}
			cfg, err := StreamConfig(&cleared)
			if err != nil {
				t.Fatal(err)
			}
			_, err = j.UpdateStream(ctx, cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("clearing %s: want the server to refuse with %q, got %v", tc.name, tc.want, err)
			}
			s, err := j.Stream(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			sameSpec(t, before, readStream(t, s))
		})
	}

	// A bucket's limitMarkerTtl turns on the stream's message TTLs, which
	// cannot be turned off again: clearing it is refused.
	t.Run("one-way keyvalue limitMarkerTtl", func(t *testing.T) {
		set := v1alpha1.KeyValueSpec{Bucket: "oneway", LimitMarkerTTL: "1m0s"}
		before := serverKeyValue(t, j, set)
		cfg, err := KeyValueConfig(&v1alpha1.KeyValueSpec{Bucket: "oneway"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = j.UpdateKeyValue(ctx, cfg)
		if want := "message TTL status can not be disabled"; err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("want the server to refuse with %q, got %v", want, err)
		}
		kv, err := j.KeyValue(ctx, "oneway")
		if err != nil {
			t.Fatal(err)
		}
		sameSpec(t, before, readKeyValue(t, kv))
	})

	t.Run("one-way sealed", func(t *testing.T) {
		open := v1alpha1.StreamSpec{Name: "ONEWAY_SEALED", Subjects: []string{"oneway.sealed"}}
		serverStream(t, j, open)
		sealed := open
		sealed.Sealed = true
		for _, step := range []struct {
			spec v1alpha1.StreamSpec
			want string
		}{{sealed, ""}, {open, "can not unseal a sealed stream"}} {
			cfg, err := StreamConfig(&step.spec)
			if err != nil {
				t.Fatal(err)
			}
			_, err = j.UpdateStream(ctx, cfg)
			switch {
			case step.want == "" && err != nil:
				t.Fatalf("seal: %v", err)
			case step.want != "" && (err == nil || !strings.Contains(err.Error(), step.want)):
				t.Fatalf("unseal: want the server to refuse with %q, got %v", step.want, err)
			}
		}
	})
}
