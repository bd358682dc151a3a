package jetstream

import (
	"slices"
	"strings"
	"testing"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestServerRewrites pins down every value the server (or nats.go on the
// way) holds differently from what the translation sent. The reconciler
// must not report these as drift. Each line is "field: sent -> held", with
// the server's own metadata (_nats.req.level, _nats.ver, _nats.level, added
// to every stream and consumer) left out; its presence is checked apart.
// A server upgrade that changes a rewrite fails here.
func TestServerRewrites(t *testing.T) {
	j := startJetStream(t)
	ctx := t.Context()
	serverStream(t, j, v1alpha1.StreamSpec{Name: "R_ORIGIN", Subjects: []string{"r.origin.>"}, AllowDirect: true})
	serverStream(t, j, v1alpha1.StreamSpec{
		Name: "R_LIMITED", Subjects: []string{"r.limited.>"},
		ConsumerLimits: &v1alpha1.ConsumerLimits{InactiveThreshold: "1h0m0s", MaxAckPending: 20},
	})
	serverStream(t, j, v1alpha1.StreamSpec{Name: "R_WORK", Subjects: []string{"r.work.>"}})
	serverKeyValue(t, j, v1alpha1.KeyValueSpec{Bucket: "rsrc"})

	stream := func(s v1alpha1.StreamSpec) func(t *testing.T) (any, any) {
		return func(t *testing.T) (any, any) {
			c, err := StreamConfig(&s)
			if err != nil {
				t.Fatal(err)
			}
			return StreamSpecFrom(c), serverStream(t, j, s)
		}
	}
	consumer := func(s v1alpha1.ConsumerSpec) func(t *testing.T) (any, any) {
		return func(t *testing.T) (any, any) {
			c, err := ConsumerConfig(&s)
			if err != nil {
				t.Fatal(err)
			}
			return ConsumerSpecFrom(c, s.StreamName), serverConsumer(t, j, s)
		}
	}
	keyValue := func(s v1alpha1.KeyValueSpec) func(t *testing.T) (any, any) {
		return func(t *testing.T) (any, any) {
			c, err := KeyValueConfig(&s)
			if err != nil {
				t.Fatal(err)
			}
			return KeyValueSpecFrom(c), serverKeyValue(t, j, s)
		}
	}
	objectStore := func(s v1alpha1.ObjectStoreSpec) func(t *testing.T) (any, any) {
		return func(t *testing.T) (any, any) {
			c, err := ObjectStoreConfig(&s)
			if err != nil {
				t.Fatal(err)
			}
			return ObjectStoreSpecFrom(c), serverObjectStore(t, j, s)
		}
	}

	cases := []struct {
		name string
		run  func(t *testing.T) (sent, held any)
		want []string
	}{{
		name: "stream: unset limits become -1, no subjects become the name",
		run:  stream(v1alpha1.StreamSpec{Name: "R_MIN"}),
		want: []string{
			`subjects: <nil> -> [R_MIN]`,
			`maxConsumers: 0 -> -1`,
			`maxMsgs: 0 -> -1`,
			`maxBytes: 0 -> -1`,
			`maxMsgsPerSubject: 0 -> -1`,
			`maxMsgSize: 0 -> -1`,
		},
	}, {
		name: "stream: zero duplicate window becomes the default",
		run:  stream(withServerLimits(v1alpha1.StreamSpec{Name: "R_DUP", Subjects: []string{"r.dup"}, DuplicateWindow: "0s"})),
		want: []string{`duplicateWindow: "0s" -> "2m0s"`},
	}, {
		name: "stream: zero duplicate window capped by max age",
		run: stream(withServerLimits(v1alpha1.StreamSpec{
			Name: "R_DUPAGE", Subjects: []string{"r.dupage"}, MaxAge: "30s", DuplicateWindow: "0s",
		})),
		want: []string{`duplicateWindow: "0s" -> "30s"`},
	}, {
		name: "stream: subject delete markers turn on TTLs and rollups, off purge denial",
		run: stream(withServerLimits(v1alpha1.StreamSpec{
			Name: "R_MARKER", Subjects: []string{"r.marker"}, SubjectDeleteMarkerTTL: "1m0s", DenyPurge: true,
		})),
		want: []string{`denyPurge: true -> false`, `allowRollup: false -> true`, `allowMsgTtl: false -> true`},
	}, {
		name: "stream: message schedules turn on rollups",
		run: stream(withServerLimits(v1alpha1.StreamSpec{
			Name: "R_SCHED", Subjects: []string{"r.sched"}, AllowMsgSchedules: true,
		})),
		want: []string{`allowRollup: false -> true`},
	}, {
		name: "stream: empty republish source becomes >",
		run: stream(withServerLimits(v1alpha1.StreamSpec{
			Name: "R_REPUB", Subjects: []string{"r.repub.>"}, Republish: &v1alpha1.Republish{Destination: "r.out.>"},
		})),
		want: []string{`republish.source: "" -> ">"`},
	}, {
		name: "stream: empty placement is dropped",
		run: stream(withServerLimits(v1alpha1.StreamSpec{
			Name: "R_PLACE", Subjects: []string{"r.place"}, Placement: &v1alpha1.Placement{},
		})),
		want: []string{`placement: {Cluster: Tags:[]} -> <nil>`},
	}, {
		name: "stream: a mirror takes direct get from its origin",
		run: stream(withServerLimits(v1alpha1.StreamSpec{
			Name: "R_MIRROR", Mirror: &v1alpha1.StreamSource{Name: "R_ORIGIN"},
		})),
		want: []string{`mirrorDirect: false -> true`},
	}, {
		name: "stream: sealing on update",
		run: func(t *testing.T) (any, any) {
			open := withServerLimits(v1alpha1.StreamSpec{
				Name: "R_SEAL", Subjects: []string{"r.seal"}, MaxAge: "1h0m0s", AllowRollup: true,
			})
			serverStream(t, j, open)
			sealed := open
			sealed.Sealed = true
			c, err := StreamConfig(&sealed)
			if err != nil {
				t.Fatal(err)
			}
			s, err := j.UpdateStream(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			return StreamSpecFrom(c), readStream(t, s)
		},
		want: []string{
			`discard: "old" -> "new"`,
			`maxAge: "1h0m0s" -> ""`,
			`denyDelete: false -> true`,
			`denyPurge: false -> true`,
			`allowRollup: true -> false`,
		},
	}, {
		name: "consumer: pull defaults",
		run:  consumer(v1alpha1.ConsumerSpec{StreamName: "R_WORK", DurableName: "pull"}),
		want: []string{`maxDeliver: 0 -> -1`, `maxWaiting: 0 -> 512`, `maxAckPending: 0 -> 1000`},
	}, {
		name: "consumer: push defaults",
		run:  consumer(v1alpha1.ConsumerSpec{StreamName: "R_WORK", DurableName: "push", DeliverSubject: "r.deliver"}),
		want: []string{`maxDeliver: 0 -> -1`, `maxAckPending: 0 -> 1000`},
	}, {
		name: "consumer: ack none keeps max ack pending 0",
		run:  consumer(v1alpha1.ConsumerSpec{StreamName: "R_WORK", DurableName: "acknone", AckPolicy: "none", MaxDeliver: -1, MaxWaiting: 1}),
		want: nil,
	}, {
		name: "consumer: backoff sets ack wait to its first step",
		run: consumer(v1alpha1.ConsumerSpec{
			StreamName: "R_WORK", DurableName: "backoff", MaxDeliver: 5, MaxWaiting: 1, MaxAckPending: 1,
			Backoff: []v1alpha1.Duration{"2s", "10s"},
		}),
		want: []string{`ackWait: "30s" -> "2s"`},
	}, {
		name: "consumer: pinned client gets a priority timeout",
		run: consumer(v1alpha1.ConsumerSpec{
			StreamName: "R_WORK", DurableName: "pinned", MaxDeliver: -1, MaxWaiting: 1, MaxAckPending: 1,
			PriorityPolicy: "pinned_client", PriorityGroups: []string{"g"},
		}),
		want: []string{`priorityTimeout: "" -> "2m0s"`},
	}, {
		name: "consumer: the stream's consumer limits fill unset values",
		run:  consumer(v1alpha1.ConsumerSpec{StreamName: "R_LIMITED", DurableName: "limited", MaxDeliver: -1, MaxWaiting: 1}),
		want: []string{`maxAckPending: 0 -> 20`, `inactiveThreshold: "" -> "1h0m0s"`},
	}, {
		name: "keyvalue: unset sizes become -1",
		run:  keyValue(v1alpha1.KeyValueSpec{Bucket: "rmin"}),
		want: []string{`maxValueSize: 0 -> -1`, `maxBytes: 0 -> -1`},
	}, {
		name: "keyvalue: a mirror is named by its stream",
		run:  keyValue(v1alpha1.KeyValueSpec{Bucket: "rmirror", MaxValueSize: -1, MaxBytes: -1, Mirror: &v1alpha1.StreamSource{Name: "rsrc"}}),
		want: []string{`mirror.name: "rsrc" -> "KV_rsrc"`},
	}, {
		name: "keyvalue: a source is named by its stream and gets a key transform",
		run:  keyValue(v1alpha1.KeyValueSpec{Bucket: "rsourced", MaxValueSize: -1, MaxBytes: -1, Sources: []v1alpha1.StreamSource{{Name: "rsrc"}}}),
		want: []string{
			`sources[0].name: "rsrc" -> "KV_rsrc"`,
			`sources[0].subjectTransforms: <nil> -> [{Source:$KV.rsrc.> Dest:$KV.rsourced.>}]`,
		},
	}, {
		name: "objectstore: unset size becomes -1",
		run:  objectStore(v1alpha1.ObjectStoreSpec{Bucket: "rmin"}),
		want: []string{`maxBytes: 0 -> -1`},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sent, held := tc.run(t)
			if got := fieldDiff(sent, held); !slices.Equal(got, tc.want) {
				t.Errorf("rewrites (sent -> held):\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(tc.want, "\n      "))
			}
		})
	}
}

// The KV_ stream behind a bucket holds more than KeyValueStatus.Config()
// shows; those fields are nats.go's choice, listed here so a reconciler
// that reads the stream directly knows them.
func TestServerRewritesKeyValueStream(t *testing.T) {
	j := startJetStream(t)
	serverKeyValue(t, j, v1alpha1.KeyValueSpec{Bucket: "b", TTL: "30s"})
	s, err := j.Stream(t.Context(), "KV_b")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c := info.Config
	checks := []struct {
		field string
		ok    bool
	}{
		{"subjects [$KV.b.>]", slices.Equal(c.Subjects, []string{"$KV.b.>"})},
		{"discard new", c.Discard == js.DiscardNew},
		{"allow rollup", c.AllowRollup},
		{"deny delete", c.DenyDelete},
		{"allow direct", c.AllowDirect},
		{"max msgs per subject = history", c.MaxMsgsPerSubject == 1},
		{"duplicate window = ttl when shorter than 2m", c.Duplicates == c.MaxAge},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("KV_b stream: want %s, config %+v", ch.field, c)
		}
	}
}
