package envtest_test

import (
	"errors"
	"fmt"
	"testing"

	js "github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/testnats"
)

// pauseKind is one JetStream kind as the pause tests drive it: a resource
// made Synced, a spec edit, another client's edit on the server, and the
// server's state as one line to compare.
type pauseKind struct {
	name string
	// make returns the resource on target, not created yet.
	make func(ns string, target v1alpha1.Target) v1alpha1.JetStreamObject
	// edit changes the spec's description to "second".
	edit func(obj client.Object)
	// drift is another client's edit on the server: a limit set to 7.
	drift func(t *testing.T, j js.JetStream) error
	// state is the server's description and that limit; spec is it as
	// the spec with description d says.
	state func(t *testing.T, j js.JetStream) (string, error)
	spec  func(d string) string
	// drifted is the state after drift, before the spec edit.
	drifted string
}

// streamState is a stream's description and the limit the kinds' drift
// sets: maxMsgs for a Stream, maxBytes for the buckets' streams.
func streamState(t *testing.T, j js.JetStream, stream string, limit func(js.StreamConfig) int64) (string, error) {
	cfg, err := serverStream(t, j, stream)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("description %q, limit %d", cfg.Description, limit(cfg)), nil
}

// driftStream sets another limit on a stream, as natscli would.
func driftStream(t *testing.T, j js.JetStream, stream string, set func(*js.StreamConfig)) error {
	cfg, err := serverStream(t, j, stream)
	if err != nil {
		return err
	}
	set(&cfg)
	_, err = j.UpdateStream(ctx(t), cfg)
	return err
}

func maxMsgs(c js.StreamConfig) int64  { return c.MaxMsgs }
func maxBytes(c js.StreamConfig) int64 { return c.MaxBytes }

var pauseKinds = []pauseKind{
	{
		name: "Stream",
		make: func(ns string, target v1alpha1.Target) v1alpha1.JetStreamObject {
			return newStream(ns, "paused", target, func(s *v1alpha1.StreamSpec) { s.Description = "first"; s.MaxMsgs = 100 })
		},
		edit: func(o client.Object) { o.(*v1alpha1.Stream).Spec.Description = "second" },
		drift: func(t *testing.T, j js.JetStream) error {
			return driftStream(t, j, "paused", func(c *js.StreamConfig) { c.MaxMsgs = 7 })
		},
		state:   func(t *testing.T, j js.JetStream) (string, error) { return streamState(t, j, "paused", maxMsgs) },
		spec:    func(d string) string { return fmt.Sprintf("description %q, limit 100", d) },
		drifted: `description "first", limit 7`,
	},
	{
		name: "Consumer",
		make: func(ns string, target v1alpha1.Target) v1alpha1.JetStreamObject {
			return newConsumer(ns, "paused", "held", target, func(c *v1alpha1.ConsumerSpec) { c.Description = "first"; c.MaxAckPending = 100 })
		},
		edit: func(o client.Object) { o.(*v1alpha1.Consumer).Spec.Description = "second" },
		drift: func(t *testing.T, j js.JetStream) error {
			c, err := j.Consumer(ctx(t), "held", "paused")
			if err != nil {
				return err
			}
			cfg := c.CachedInfo().Config
			cfg.MaxAckPending = 7
			_, err = j.UpdateConsumer(ctx(t), "held", cfg)
			return err
		},
		state: func(t *testing.T, j js.JetStream) (string, error) {
			c, err := j.Consumer(ctx(t), "held", "paused")
			if err != nil {
				return "", err
			}
			cfg := c.CachedInfo().Config
			return fmt.Sprintf("description %q, limit %d", cfg.Description, cfg.MaxAckPending), nil
		},
		spec:    func(d string) string { return fmt.Sprintf("description %q, limit 100", d) },
		drifted: `description "first", limit 7`,
	},
	{
		name: "KeyValue",
		make: func(ns string, target v1alpha1.Target) v1alpha1.JetStreamObject {
			kv := &v1alpha1.KeyValue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "paused"}}
			kv.Spec.Target, kv.Spec.Bucket, kv.Spec.Description = target, "paused", "first"
			return kv
		},
		edit: func(o client.Object) { o.(*v1alpha1.KeyValue).Spec.Description = "second" },
		drift: func(t *testing.T, j js.JetStream) error {
			return driftStream(t, j, "KV_paused", func(c *js.StreamConfig) { c.MaxBytes = 7 << 20 })
		},
		state:   func(t *testing.T, j js.JetStream) (string, error) { return streamState(t, j, "KV_paused", maxBytes) },
		spec:    func(d string) string { return fmt.Sprintf("description %q, limit -1", d) },
		drifted: `description "first", limit 7340032`,
	},
	{
		name: "ObjectStore",
		make: func(ns string, target v1alpha1.Target) v1alpha1.JetStreamObject {
			o := &v1alpha1.ObjectStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "paused"}}
			o.Spec.Target, o.Spec.Bucket, o.Spec.Description = target, "paused", "first"
			return o
		},
		edit: func(o client.Object) { o.(*v1alpha1.ObjectStore).Spec.Description = "second" },
		drift: func(t *testing.T, j js.JetStream) error {
			return driftStream(t, j, "OBJ_paused", func(c *js.StreamConfig) { c.MaxBytes = 7 << 20 })
		},
		state:   func(t *testing.T, j js.JetStream) (string, error) { return streamState(t, j, "OBJ_paused", maxBytes) },
		spec:    func(d string) string { return fmt.Sprintf("description %q, limit -1", d) },
		drifted: `description "first", limit 7340032`,
	},
}

// stateIs is an error unless the server's state, read by k, is want.
func stateIs(t *testing.T, k pauseKind, j js.JetStream, want string) func() error {
	return func() error {
		got, err := k.state(t, j)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("the server holds %s, want %s", got, want)
		}
		return nil
	}
}

// startPaused makes k's resource Synced on a server of its own, then
// pauses it and waits for its status to say so.
func startPaused(t *testing.T, k pauseKind) (ns string, obj v1alpha1.JetStreamObject, j js.JetStream) {
	t.Helper()
	ns = namespace(t)
	s := natsServer(t, 0)
	j = testnats.JetStream(t, s)
	target := at(serverURL(s))
	if k.name == "Consumer" {
		create(t, newStream(ns, "held", target))
	}
	obj = k.make(ns, target)
	create(t, obj)
	jsReady(t, obj, metav1.ConditionTrue, "Synced")
	eventually(t, wait, stateIs(t, k, j, k.spec("first")))
	setPaused(t, obj, true)
	eventually(t, wait, func() error {
		get(t, obj)
		return pausedCondition(obj.GetJetStreamStatus().Conditions, v1alpha1.ReasonReconciliationPaused)
	})
	return ns, obj, j
}

// While a JetStream resource is paused, neither its spec edit nor another
// client's edit on the server is acted on, over a window in which the
// edit's advisory and the spec change each wake the resource; its status
// says it is paused and that the spec waits. Resumed, both are corrected
// and Paused is gone.
//
// Careless variants seen to fail here: pause left to the create path
// (Reconcile always calling sync, as a pause checked only where sync
// creates would for these existing objects): every kind's window broke
// at once, "the server holds description \"second\", limit 100";
// the annotation not waking the controller (pause.Changed passing
// nothing): the resume was never picked up, "not within 30s: the server
// holds description \"first\", limit 7" (the pause itself happened to
// be seen, by the pass its own creation's advisory woke).
func TestPausedJetStreamResourceChangesNothingUntilResumed(t *testing.T) {
	t.Parallel()
	for _, k := range pauseKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			_, obj, j := startPaused(t, k)
			if err := k.drift(t, j); err != nil {
				t.Fatal(err)
			}
			update(t, obj, func(o v1alpha1.JetStreamObject) { k.edit(o) })
			poll.Holds(t, pauseWindow, stateIs(t, k, j, k.drifted))
			// The status said why all along: the spec of the new
			// generation waits, by the pause's name.
			jsReady(t, obj, metav1.ConditionFalse, v1alpha1.ReasonReconciliationPaused)
			if err := pausedCondition(obj.GetJetStreamStatus().Conditions, v1alpha1.ReasonReconciliationPaused); err != nil {
				t.Fatal(err)
			}

			setPaused(t, obj, false)
			eventually(t, wait, stateIs(t, k, j, k.spec("second")))
			jsReady(t, obj, metav1.ConditionTrue, "Synced")
			if err := notPaused(obj.GetJetStreamStatus().Conditions); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A paused stream edited on the server alone (no spec change) is not
// restored, however often the edit's advisory wakes it, and says it
// drifted; resumed, the drift is undone. The spec edit of the test above
// would hide the careless variants here: any write of the resumed pass
// carries the whole spec.
//
// Careless variants seen to fail here: the paused pass reading as sync
// does, taking the pool's mark of another client's write and recording
// the configuration it observed: resumed, the stream read as in sync and
// kept maxMsgs 7 for good ("not within 30s"); pause checked only for a
// changed generation (a pass woken by an advisory synced): the window
// broke on the first advisory. (Recording the configuration alone passes
// here: the mark, still set, makes the resumed pass write; an operator
// restarted while paused would lose the mark, which is why the paused
// pass records nothing.)
func TestPausedStreamDriftIsUndoneOnResume(t *testing.T) {
	t.Parallel()
	k := pauseKinds[0]
	_, obj, j := startPaused(t, k)
	if err := k.drift(t, j); err != nil {
		t.Fatal(err)
	}
	poll.Holds(t, pauseWindow, stateIs(t, k, j, k.drifted))
	jsReady(t, obj, metav1.ConditionFalse, "Drifted")

	setPaused(t, obj, false)
	eventually(t, wait, stateIs(t, k, j, k.spec("first")))
	jsReady(t, obj, metav1.ConditionTrue, "Synced")
}

// A paused resource deleted lets go without deleting its server object,
// as Strimzi's topic operator does with a paused topic, and an event says
// so; its data stays.
//
// Careless variant seen to fail here: finalize without the pause (the
// stream was deleted, "stream not found").
func TestPausedStreamDeletedLeavesTheServerObject(t *testing.T) {
	t.Parallel()
	k := pauseKinds[0]
	ns, obj, j := startPaused(t, k)
	if err := k8s.Delete(ctx(t), obj); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(obj), obj); err == nil {
			return fmt.Errorf("still there, finalizers %v", obj.GetFinalizers())
		}
		return nil
	})
	if _, err := serverStream(t, j, "paused"); errors.Is(err, js.ErrStreamNotFound) || err != nil {
		t.Fatalf("the stream of a paused resource: %v", err)
	}
	eventually(t, wait, func() error { return eventWithReason(t, ns, "FinalizerReleased") })
}
