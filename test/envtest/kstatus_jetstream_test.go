package envtest_test

import (
	"testing"

	js "github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/testnats"
)

// TestKstatusReadsAStreamAndItsConsumerInEachPhase: what GitOps tools
// (kstatus, on the live objects) make of a Stream and a Consumer on a real
// nats-server: a consumer waiting for its stream is in progress from its
// creation on (before the operator's first status too, by the status'
// default), both current once synced, failed while the server refuses a
// change (and the refused generation observed), current again once the
// spec is fixed, and in progress while the NATS system cannot be reached.
//
// Careless variants, each run: observedGeneration marked only when
// synced (the refused update reads InProgress, never Failed); no default
// status (the waiting consumer reads Current before the operator's first
// write); every failure stalled (the unreachable system reads Failed).
func TestKstatusReadsAStreamAndItsConsumerInEachPhase(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s := natsServer(t, 0)
	j := testnats.JetStream(t, s)
	target := at(serverURL(s))

	cons := newConsumer(ns, "worker", "orders", target)
	create(t, cons)
	// The operator waits quietly a few retries before it writes that the
	// stream is missing: in progress meanwhile, and after.
	poll.Holds(t, wait/10, func() error { return kstatusHolds(t, cons, kstatus.InProgressStatus) })
	kstatusIs(t, cons, kstatus.InProgressStatus, "StreamNotFound")

	taken := newStream(ns, "taken", target)
	create(t, taken)
	st := newStream(ns, "orders", target)
	create(t, st)
	kstatusIs(t, st, kstatus.CurrentStatus, "Synced")
	kstatusIs(t, cons, kstatus.CurrentStatus, "Synced")
	kstatusIs(t, taken, kstatus.CurrentStatus, "Synced")

	// Subjects another stream holds: the server refuses the update.
	update(t, st, func(st *v1alpha1.Stream) { st.Spec.Subjects = []string{"taken.>"} })
	kstatusIs(t, st, kstatus.FailedStatus, "ServerError")
	stalledSays(t, st.Status.Conditions)
	if st.Status.SyncedGeneration != st.Generation-1 {
		t.Fatalf("syncedGeneration %d at generation %d: the server holds the one before", st.Status.SyncedGeneration, st.Generation)
	}
	update(t, st, func(st *v1alpha1.Stream) { st.Spec.Subjects = []string{"orders.>", "more.>"} })
	kstatusIs(t, st, kstatus.CurrentStatus, "Synced")
	cfg, err := serverStream(t, j, "orders")
	if err != nil || len(cfg.Subjects) != 2 {
		t.Fatalf("server stream %+v, %v: want the fixed subjects", cfg, err)
	}

	// The NATS system gone: the operator keeps trying, in progress.
	s.Shutdown()
	update(t, cons, func(c *v1alpha1.Consumer) { c.Spec.Description = "after the outage" })
	kstatusIs(t, cons, kstatus.InProgressStatus, "ConnectionFailed")
	jsReady(t, cons, metav1.ConditionFalse, "ConnectionFailed")
}

// TestKstatusReadsBucketsInEachPhase: a KeyValue and an ObjectStore read
// as current once made, and as failed while the bucket's stream on the
// server is not kubenats' (no adoptExisting): only the user can settle
// that. Then adopted, current.
//
// Careless variant, run: Stalled never written (the refusal reads
// InProgress).
func TestKstatusReadsBucketsInEachPhase(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s := natsServer(t, 0)
	j := testnats.JetStream(t, s)
	target := at(serverURL(s))

	kv := &v1alpha1.KeyValue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}}
	kv.Spec.Target, kv.Spec.Bucket = target, "settings"
	create(t, kv)
	obj := &v1alpha1.ObjectStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blobs"}}
	obj.Spec.Target, obj.Spec.Bucket = target, "blobs"
	create(t, obj)
	kstatusIs(t, kv, kstatus.CurrentStatus, "Synced")
	kstatusIs(t, obj, kstatus.CurrentStatus, "Synced")

	// Buckets someone else made on the server.
	if _, err := j.CreateKeyValue(ctx(t), js.KeyValueConfig{Bucket: "foreign"}); err != nil {
		t.Fatal(err)
	}
	if _, err := j.CreateObjectStore(ctx(t), js.ObjectStoreConfig{Bucket: "foreignobj"}); err != nil {
		t.Fatal(err)
	}
	fkv := &v1alpha1.KeyValue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "foreign"}}
	fkv.Spec.Target, fkv.Spec.Bucket = target, "foreign"
	create(t, fkv)
	fobj := &v1alpha1.ObjectStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "foreignobj"}}
	fobj.Spec.Target, fobj.Spec.Bucket = target, "foreignobj"
	create(t, fobj)
	kstatusIs(t, fkv, kstatus.FailedStatus, "AlreadyExists")
	kstatusIs(t, fobj, kstatus.FailedStatus, "AlreadyExists")
	stalledSays(t, fkv.Status.Conditions)

	update(t, fkv, func(kv *v1alpha1.KeyValue) { kv.Spec.AdoptExisting = true })
	update(t, fobj, func(o *v1alpha1.ObjectStore) { o.Spec.AdoptExisting = true })
	kstatusIs(t, fkv, kstatus.CurrentStatus, "Synced")
	kstatusIs(t, fobj, kstatus.CurrentStatus, "Synced")
}
