package jetstream

import (
	"strings"
	"testing"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// These tests send translated specs to a real nats-server and translate
// back what it holds. Each full-field case uses values the server keeps as
// sent, so any difference is a translation bug; what the server does
// rewrite is pinned down in TestServerRewrites.

// serverStream creates spec's stream, sends the same config again as the
// reconciler does on every pass (the server must accept it unchanged,
// whatever it rewrote), and returns the spec of what the server holds,
// without the server's own metadata (checked present).
func serverStream(t *testing.T, j js.JetStream, spec v1alpha1.StreamSpec) v1alpha1.StreamSpec {
	t.Helper()
	cfg, err := StreamConfig(&spec)
	if err != nil {
		t.Fatalf("StreamConfig: %v", err)
	}
	if _, err := j.CreateStream(t.Context(), cfg); err != nil {
		t.Fatalf("create stream %s: %v", spec.Name, err)
	}
	s, err := j.UpdateStream(t.Context(), cfg)
	if err != nil {
		t.Fatalf("update stream %s with the same config: %v", spec.Name, err)
	}
	return readStream(t, s)
}

func readStream(t *testing.T, s js.Stream) v1alpha1.StreamSpec {
	t.Helper()
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatalf("stream info: %v", err)
	}
	hasServerMetadata(t, info.Config.Metadata)
	got := StreamSpecFrom(info.Config)
	got.Metadata = withoutServerMetadata(got.Metadata)
	return got
}

// sameSpec fails with one line per field the server holds differently.
func sameSpec(t *testing.T, sent, held any) {
	t.Helper()
	if d := fieldDiff(sent, held); len(d) > 0 {
		t.Errorf("the server holds something else (expected -> held):\n%s", strings.Join(d, "\n"))
	}
}

func TestServerStream(t *testing.T) {
	j := startJetStream(t)
	cases := []struct {
		name string
		spec v1alpha1.StreamSpec
	}{{
		name: "limits with every feature flag",
		spec: v1alpha1.StreamSpec{
			Name:                   "FULL_LIMITS",
			Description:            "every field the server keeps",
			Subjects:               []string{"full.>"},
			Retention:              "limits",
			MaxConsumers:           10,
			MaxMsgs:                1000,
			MaxBytes:               1 << 20,
			Discard:                "old",
			MaxAge:                 "24h0m0s",
			MaxMsgsPerSubject:      5,
			MaxMsgSize:             4096,
			Storage:                "file",
			Replicas:               1,
			NoAck:                  true,
			DuplicateWindow:        "1m30s",
			Placement:              &v1alpha1.Placement{Tags: []string{"ssd"}},
			DenyDelete:             true,
			AllowRollup:            true,
			Compression:            "s2",
			FirstSequence:          100,
			SubjectTransform:       &v1alpha1.SubjectTransform{Source: "full.>", Dest: "stored.>"},
			Republish:              &v1alpha1.Republish{Source: "stored.>", Destination: "repub.>", HeadersOnly: true},
			AllowDirect:            true,
			ConsumerLimits:         &v1alpha1.ConsumerLimits{InactiveThreshold: "1h0m0s", MaxAckPending: 500},
			Metadata:               map[string]string{"team": "billing", "io.kubenats.owner": "ns/name"},
			AllowMsgTTL:            true,
			SubjectDeleteMarkerTTL: "5m0s",
			AllowAtomicPublish:     true,
			AllowMsgSchedules:      true,
			AllowBatchPublish:      true,
		},
	}, {
		name: "workqueue discarding new per subject in memory",
		spec: v1alpha1.StreamSpec{
			Name:              "FULL_WQ",
			Description:       "work",
			Subjects:          []string{"wq.a", "wq.b.*"},
			Retention:         "workqueue",
			MaxConsumers:      1,
			MaxMsgs:           10,
			MaxBytes:          4096,
			Discard:           "new",
			DiscardPerSubject: true,
			MaxAge:            "1h0m0s",
			MaxMsgsPerSubject: 3,
			MaxMsgSize:        512,
			Storage:           "memory",
			Replicas:          1,
			DuplicateWindow:   "10s",
			DenyDelete:        true,
			DenyPurge:         true,
			Compression:       "none",
			Metadata:          map[string]string{"k": "v"},
		},
	}, {
		name: "interest with async persist",
		spec: v1alpha1.StreamSpec{
			Name:            "FULL_ASYNC",
			Subjects:        []string{"async.>"},
			Retention:       "interest",
			MaxMsgs:         -1,
			MaxBytes:        -1,
			Discard:         "old",
			Storage:         "file",
			Replicas:        1,
			DuplicateWindow: "2m0s",
			Compression:     "none",
			PersistMode:     "async",
		},
	}, {
		name: "counter",
		spec: v1alpha1.StreamSpec{
			Name:            "FULL_COUNTER",
			Subjects:        []string{"count.>"},
			Retention:       "limits",
			Discard:         "old",
			Storage:         "file",
			Replicas:        1,
			DuplicateWindow: "2m0s",
			Compression:     "s2",
			AllowMsgCounter: true,
			AllowDirect:     true,
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sameSpec(t, withServerLimits(tc.spec), serverStream(t, j, tc.spec))
		})
	}
}

// withServerLimits is spec with the limits the server fills in when unset
// (0 means unlimited, which the server writes as -1). See
// TestServerRewrites.
func withServerLimits(s v1alpha1.StreamSpec) v1alpha1.StreamSpec {
	for _, p := range []*int64{&s.MaxMsgs, &s.MaxBytes, &s.MaxMsgsPerSubject} {
		if *p == 0 {
			*p = -1
		}
	}
	if s.MaxConsumers == 0 {
		s.MaxConsumers = -1
	}
	if s.MaxMsgSize == 0 {
		s.MaxMsgSize = -1
	}
	return s
}

func TestServerStreamMirrorAndSources(t *testing.T) {
	j := startJetStream(t)
	for _, origin := range []v1alpha1.StreamSpec{
		{Name: "ORIGIN", Subjects: []string{"origin.>"}, AllowDirect: true},
		{Name: "ORIGIN2", Subjects: []string{"o2.>"}},
	} {
		serverStream(t, j, origin)
	}
	// Durable sourcing reads through a push consumer acking by flow control.
	serverConsumer(t, j, v1alpha1.ConsumerSpec{
		StreamName: "ORIGIN2", DurableName: "to_durable", AckPolicy: "flow_control", MaxAckPending: 100,
		DeliverSubject: "deliver.durable", FlowControl: true, HeartbeatInterval: "1s",
	})
	cases := []struct {
		name string
		spec v1alpha1.StreamSpec
	}{{
		name: "mirror with start sequence and filter",
		spec: v1alpha1.StreamSpec{
			Name:            "MIRROR",
			Retention:       "limits",
			Discard:         "old",
			Storage:         "file",
			Replicas:        1,
			DuplicateWindow: "2m0s",
			Compression:     "none",
			Mirror:          &v1alpha1.StreamSource{Name: "ORIGIN", OptStartSeq: 1, FilterSubject: "origin.a"},
			MirrorDirect:    true,
		},
	}, {
		name: "mirror with start time and transforms",
		spec: v1alpha1.StreamSpec{
			Name:            "MIRROR2",
			Retention:       "limits",
			Discard:         "old",
			Storage:         "file",
			Replicas:        1,
			DuplicateWindow: "2m0s",
			Compression:     "none",
			Mirror: &v1alpha1.StreamSource{
				Name:              "ORIGIN2",
				OptStartTime:      &fixedMeta,
				SubjectTransforms: []v1alpha1.SubjectTransform{{Source: "o2.>", Dest: "mirrored.>"}},
			},
		},
	}, {
		name: "sources local and external",
		spec: v1alpha1.StreamSpec{
			Name:            "SOURCED",
			Subjects:        []string{"sourced.>"},
			Retention:       "limits",
			Discard:         "old",
			Storage:         "file",
			Replicas:        1,
			DuplicateWindow: "2m0s",
			Compression:     "none",
			Sources: []v1alpha1.StreamSource{
				{Name: "ORIGIN", OptStartTime: &fixedMeta, SubjectTransforms: []v1alpha1.SubjectTransform{
					{Source: "origin.a.>", Dest: "copied.a.>"}, {Source: "origin.b.>", Dest: "copied.b.>"},
				}},
				{Name: "ORIGIN2", OptStartSeq: 2, FilterSubject: "o2.a"},
				{Name: "REMOTE", ExternalAPIPrefix: "$JS.hub.API", ExternalDeliverPrefix: "deliver.hub"},
			},
		},
	}, {
		name: "durable source",
		spec: v1alpha1.StreamSpec{
			Name:            "DURABLE",
			Retention:       "limits",
			Discard:         "old",
			Storage:         "file",
			Replicas:        1,
			DuplicateWindow: "2m0s",
			Compression:     "none",
			Sources: []v1alpha1.StreamSource{{
				Name:     "ORIGIN2",
				Consumer: &v1alpha1.SourceConsumer{Name: "to_durable", DeliverSubject: "deliver.durable"},
			}},
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sameSpec(t, withServerLimits(tc.spec), serverStream(t, j, tc.spec))
		})
	}
}

// serverConsumer creates spec's consumer, sends the same config again, and
// returns the spec of what the server holds, without its own metadata.
func serverConsumer(t *testing.T, j js.JetStream, spec v1alpha1.ConsumerSpec) v1alpha1.ConsumerSpec {
	t.Helper()
	cfg, err := ConsumerConfig(&spec)
	if err != nil {
		t.Fatalf("ConsumerConfig: %v", err)
	}
	if _, err := j.CreateConsumer(t.Context(), spec.StreamName, cfg); err != nil {
		t.Fatalf("create consumer %s: %v", spec.DurableName, err)
	}
	c, err := j.UpdateConsumer(t.Context(), spec.StreamName, cfg)
	if err != nil {
		t.Fatalf("update consumer %s with the same config: %v", spec.DurableName, err)
	}
	return readConsumer(t, c, spec.StreamName)
}

func readConsumer(t *testing.T, c js.Consumer, stream string) v1alpha1.ConsumerSpec {
	t.Helper()
	info, err := c.Info(t.Context())
	if err != nil {
		t.Fatalf("consumer info: %v", err)
	}
	hasServerMetadata(t, info.Config.Metadata)
	got := ConsumerSpecFrom(info.Config, stream)
	got.Metadata = withoutServerMetadata(got.Metadata)
	return got
}

// withConsumerServerDefaults is spec with what the server fills in when
// unset: unlimited deliveries (-1), a pull consumer's 512 waiting pulls, and
// 1000 pending acks when acks are on. See TestServerRewrites.
func withConsumerServerDefaults(s v1alpha1.ConsumerSpec) v1alpha1.ConsumerSpec {
	if s.MaxDeliver == 0 {
		s.MaxDeliver = -1
	}
	if s.DeliverSubject == "" && s.MaxWaiting == 0 {
		s.MaxWaiting = 512
	}
	if s.MaxAckPending == 0 && s.AckPolicy != "none" {
		s.MaxAckPending = 1000
	}
	return s
}

func TestServerConsumer(t *testing.T) {
	j := startJetStream(t)
	serverStream(t, j, v1alpha1.StreamSpec{Name: "WORK", Subjects: []string{"c.>"}})
	base := func(name string) v1alpha1.ConsumerSpec {
		s := minimalConsumer()
		s.StreamName, s.DurableName = "WORK", name
		return s
	}
	with := func(name string, f func(*v1alpha1.ConsumerSpec)) v1alpha1.ConsumerSpec {
		s := base(name)
		f(&s)
		return s
	}
	cases := []struct {
		name string
		spec v1alpha1.ConsumerSpec
	}{{
		name: "pull with every pull field",
		spec: v1alpha1.ConsumerSpec{
			StreamName:         "WORK",
			DurableName:        "pull_full",
			Description:        "every pull field",
			DeliverPolicy:      "byStartSequence",
			OptStartSeq:        5,
			AckPolicy:          "explicit",
			AckWait:            "1s",
			MaxDeliver:         5,
			Backoff:            []v1alpha1.Duration{"1s", "5s", "1m0s"},
			FilterSubjects:     []string{"c.a", "c.b"},
			ReplayPolicy:       "original",
			SampleFreq:         "50%",
			MaxWaiting:         100,
			MaxAckPending:      200,
			HeadersOnly:        true,
			MaxRequestBatch:    10,
			MaxRequestExpires:  "30s",
			MaxRequestMaxBytes: 4096,
			InactiveThreshold:  "1h0m0s",
			Replicas:           1,
			MemStorage:         true,
			Metadata:           map[string]string{"team": "billing"},
			PriorityPolicy:     "pinned_client",
			PriorityTimeout:    "1m0s",
			PriorityGroups:     []string{"jobs", "batch"},
		},
	}, {
		name: "push with flow control",
		spec: v1alpha1.ConsumerSpec{
			StreamName:        "WORK",
			DurableName:       "push_fc",
			Description:       "push",
			DeliverPolicy:     "byStartTime",
			OptStartTime:      &fixedMeta,
			AckPolicy:         "all",
			AckWait:           "45s",
			MaxDeliver:        3,
			FilterSubject:     "c.x",
			ReplayPolicy:      "instant",
			RateLimitBps:      1 << 20,
			MaxAckPending:     50,
			HeadersOnly:       true,
			InactiveThreshold: "10m0s",
			Metadata:          map[string]string{"k": "v"},
			DeliverSubject:    "deliver.fc",
			FlowControl:       true,
			HeartbeatInterval: "5s",
		},
	}, {
		name: "push with deliver group",
		spec: with("push_group", func(s *v1alpha1.ConsumerSpec) {
			s.DeliverPolicy, s.AckPolicy, s.FilterSubject = "lastPerSubject", "none", "c.>"
			s.DeliverSubject, s.DeliverGroup = "deliver.grp", "grp"
		}),
	}, {
		name: "deliver all",
		spec: base("deliver_all"),
	}, {
		name: "deliver last with overflow priority",
		spec: with("deliver_last", func(s *v1alpha1.ConsumerSpec) {
			s.DeliverPolicy, s.PriorityPolicy, s.PriorityGroups = "last", "overflow", []string{"a"}
		}),
	}, {
		name: "deliver new with prioritized priority",
		spec: with("deliver_new", func(s *v1alpha1.ConsumerSpec) {
			s.DeliverPolicy, s.PriorityPolicy, s.PriorityGroups = "new", "prioritized", []string{"b"}
		}),
	}, {
		name: "ack none",
		spec: with("ack_none", func(s *v1alpha1.ConsumerSpec) { s.AckPolicy = "none" }),
	}, {
		name: "ack all replay original",
		spec: with("ack_all", func(s *v1alpha1.ConsumerSpec) { s.AckPolicy, s.ReplayPolicy = "all", "original" }),
	}, {
		name: "paused until a time to come",
		spec: with("paused", func(s *v1alpha1.ConsumerSpec) { s.PauseUntil = &otherMeta }),
	}, {
		// The server gives such a consumer no ack wait: the spec's
		// defaulted one is not sent, and reads back as 0s.
		name: "ack by flow control",
		spec: with("ack_fc", func(s *v1alpha1.ConsumerSpec) {
			s.AckPolicy, s.AckWait, s.MaxAckPending = "flow_control", "0s", 100
			s.DeliverSubject, s.FlowControl, s.HeartbeatInterval = "deliver.ackfc", true, "1s"
		}),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sameSpec(t, withConsumerServerDefaults(tc.spec), serverConsumer(t, j, tc.spec))
		})
	}
}

// serverKeyValue creates spec's bucket, sends the same config again, and
// returns the spec of what the server holds, read through
// KeyValueStatus.Config().
func serverKeyValue(t *testing.T, j js.JetStream, spec v1alpha1.KeyValueSpec) v1alpha1.KeyValueSpec {
	t.Helper()
	cfg, err := KeyValueConfig(&spec)
	if err != nil {
		t.Fatalf("KeyValueConfig: %v", err)
	}
	if _, err := j.CreateKeyValue(t.Context(), cfg); err != nil {
		t.Fatalf("create bucket %s: %v", spec.Bucket, err)
	}
	kv, err := j.UpdateKeyValue(t.Context(), cfg)
	if err != nil {
		t.Fatalf("update bucket %s with the same config: %v", spec.Bucket, err)
	}
	return readKeyValue(t, kv)
}

func readKeyValue(t *testing.T, kv js.KeyValue) v1alpha1.KeyValueSpec {
	t.Helper()
	st, err := kv.Status(t.Context())
	if err != nil {
		t.Fatalf("bucket status: %v", err)
	}
	hasServerMetadata(t, st.Config().Metadata)
	got := KeyValueSpecFrom(st.Config())
	got.Metadata = withoutServerMetadata(got.Metadata)
	return got
}

func TestServerKeyValue(t *testing.T) {
	j := startJetStream(t)
	cases := []struct {
		name string
		spec v1alpha1.KeyValueSpec
	}{{
		name: "every field but mirror and sources",
		spec: v1alpha1.KeyValueSpec{
			Bucket:         "full",
			Description:    "every field",
			MaxValueSize:   1024,
			History:        5,
			TTL:            "1h0m0s",
			MaxBytes:       1 << 20,
			Storage:        "file",
			Replicas:       1,
			Placement:      &v1alpha1.Placement{Tags: []string{"ssd"}},
			Republish:      &v1alpha1.Republish{Source: "$KV.full.>", Destination: "repub.kv.>", HeadersOnly: true},
			Compression:    true,
			LimitMarkerTTL: "1m0s",
			Metadata:       map[string]string{"team": "platform"},
		},
	}, {
		name: "memory with the longest history",
		spec: v1alpha1.KeyValueSpec{
			Bucket:       "mem",
			MaxValueSize: -1,
			History:      64,
			MaxBytes:     -1,
			Storage:      "memory",
			Replicas:     1,
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sameSpec(t, tc.spec, serverKeyValue(t, j, tc.spec))
		})
	}
}

// serverObjectStore creates spec's bucket, sends the same config again,
// and returns the spec of what the server holds, read from the bucket's
// OBJ_ stream.
func serverObjectStore(t *testing.T, j js.JetStream, spec v1alpha1.ObjectStoreSpec) v1alpha1.ObjectStoreSpec {
	t.Helper()
	cfg, err := ObjectStoreConfig(&spec)
	if err != nil {
		t.Fatalf("ObjectStoreConfig: %v", err)
	}
	if _, err := j.CreateObjectStore(t.Context(), cfg); err != nil {
		t.Fatalf("create bucket %s: %v", spec.Bucket, err)
	}
	if _, err := j.UpdateObjectStore(t.Context(), cfg); err != nil {
		t.Fatalf("update bucket %s with the same config: %v", spec.Bucket, err)
	}
	return readObjectStore(t, j, spec.Bucket)
}

func readObjectStore(t *testing.T, j js.JetStream, bucket string) v1alpha1.ObjectStoreSpec {
	t.Helper()
	s, err := j.Stream(t.Context(), "OBJ_"+bucket)
	if err != nil {
		t.Fatalf("bucket stream: %v", err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatalf("bucket stream info: %v", err)
	}
	hasServerMetadata(t, info.Config.Metadata)
	got := ObjectStoreSpecFrom(ObjectStoreConfigFromStream(info.Config))
	got.Metadata = withoutServerMetadata(got.Metadata)
	return got
}

func TestServerObjectStore(t *testing.T) {
	j := startJetStream(t)
	cases := []struct {
		name string
		spec v1alpha1.ObjectStoreSpec
	}{{
		name: "every field",
		spec: v1alpha1.ObjectStoreSpec{
			Bucket:      "full",
			Description: "every field",
			TTL:         "720h0m0s",
			MaxBytes:    1 << 30,
			Storage:     "file",
			Replicas:    1,
			Placement:   &v1alpha1.Placement{Tags: []string{"hdd"}},
			Compression: true,
			Metadata:    map[string]string{"team": "media"},
		},
	}, {
		name: "memory unlimited",
		spec: v1alpha1.ObjectStoreSpec{Bucket: "mem", MaxBytes: -1, Storage: "memory", Replicas: 1},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sameSpec(t, tc.spec, serverObjectStore(t, j, tc.spec))
		})
	}
}

// The filled* helpers are a spec as the server should hold it: CRD
// defaults filled by the translation, then the server's fill-ins for unset
// limits (see TestServerRewrites).

func filledStream(t *testing.T, s v1alpha1.StreamSpec) v1alpha1.StreamSpec {
	t.Helper()
	c, err := StreamConfig(&s)
	if err != nil {
		t.Fatal(err)
	}
	return withServerLimits(StreamSpecFrom(c))
}

func filledConsumer(t *testing.T, s v1alpha1.ConsumerSpec) v1alpha1.ConsumerSpec {
	t.Helper()
	c, err := ConsumerConfig(&s)
	if err != nil {
		t.Fatal(err)
	}
	return withConsumerServerDefaults(ConsumerSpecFrom(c, s.StreamName))
}

func filledKeyValue(t *testing.T, s v1alpha1.KeyValueSpec) v1alpha1.KeyValueSpec {
	t.Helper()
	c, err := KeyValueConfig(&s)
	if err != nil {
		t.Fatal(err)
	}
	out := KeyValueSpecFrom(c)
	if out.MaxValueSize == 0 {
		out.MaxValueSize = -1
	}
	if out.MaxBytes == 0 {
		out.MaxBytes = -1
	}
	return out
}

func filledObjectStore(t *testing.T, s v1alpha1.ObjectStoreSpec) v1alpha1.ObjectStoreSpec {
	t.Helper()
	c, err := ObjectStoreConfig(&s)
	if err != nil {
		t.Fatal(err)
	}
	out := ObjectStoreSpecFrom(c)
	if out.MaxBytes == 0 {
		out.MaxBytes = -1
	}
	return out
}
