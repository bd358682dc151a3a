package realnode_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/poll"
)

// TestBackupJobOnTheRealNode: a Backup of an R3 stream with a durable
// consumer runs as a Job of the operator's own image on the real kubelet
// (its second binary, the cluster's credentials from files, the claim
// written as user 65532), and its status says what the backup holds, from
// the pod's termination message. The cluster is then deleted with its
// claims, and a new one gets the stream back from a Stream whose spec
// names the Backup (a restore Job): every message under its sequence
// number, and the consumer at its ack floor (the next message it gets is
// the first it had not acknowledged).
// Careless variant watched failing: the restored stream not taken as the
// Stream's own (the restore Job made it, and the Stream stayed refused
// with AlreadyExists).
func TestBackupJobOnTheRealNode(t *testing.T) {
	needNode(t)
	waitOperator(t)
	ns := namespace(t)
	c := formCluster(t, ns, "bk", nil)
	nc := clientConn(t, c)
	js := e2ekit.AppJetStream(t, nc)
	const total, acked = 300, 120
	fillOrders(t, js, total, acked)

	b := takeBackup(t, ns, "orders-1", v1alpha1.BackupSpec{Cluster: c.Name, Stream: "ORDERS"})
	st := b.Status
	if st.Stream != "ORDERS" || st.FirstSequence != 1 || st.LastSequence != total || st.Messages != total || st.Consumers != 1 ||
		len(st.SHA256) != 64 || st.DataSize <= 0 || st.Path != "backups/orders-1" || st.StartedAt == nil || st.Duration == "" {
		t.Fatalf("the Backup's status does not say what it holds: %+v", st)
	}
	t.Logf("backup of %d messages (%d bytes) taken in %s by Job %s", st.Messages, st.Bytes, st.Duration, st.JobName)

	// The cluster is lost with its claims; a new one gets the stream back
	// from the Backup, declared as a Stream that says where it comes from.
	if err := node.Client.Patch(ctxOf(t), c, client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+plan.AnnotationDeleteWithData+`":"true"}}}`))); err != nil {
		t.Fatal(err)
	}
	if err := node.Client.Delete(ctxOf(t), c); err != nil {
		t.Fatal(err)
	}
	if err := node.Client.DeleteAllOf(ctxOf(t), &corev1.PersistentVolumeClaim{}, client.InNamespace(ns),
		client.MatchingLabels(render.SelectorLabels(c))); err != nil {
		t.Fatal(err)
	}
	again := formCluster(t, ns, "bk2", nil)
	restoreOrders(t, ns, again.Name, &v1alpha1.StreamRestore{Backup: b.Name})
	js = e2ekit.AppJetStream(t, clientConn(t, again))
	s, err := js.Stream(ctxOf(t), "ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	if info := s.CachedInfo(); info.State.Msgs != total || info.State.FirstSeq != 1 || info.State.LastSeq != total || info.Config.Replicas != 3 {
		t.Fatalf("restored: %+v, R%d; want sequences 1 to %d on three servers", info.State, info.Config.Replicas, total)
	}
	for _, seq := range []uint64{1, acked, total} {
		m, err := s.GetMsg(ctxOf(t), seq)
		if err != nil {
			t.Fatalf("restored sequence %d: %v", seq, err)
		}
		if want := "order-" + strconv.FormatUint(seq, 10); string(m.Data) != want {
			t.Fatalf("restored sequence %d holds %q, want %q", seq, m.Data, want)
		}
	}
	consumerResumesAfter(t, s, acked)
}

// fillOrders makes the R3 stream ORDERS with messages order-1 to
// order-<total>, and the durable consumer billing with the first acked of
// them acknowledged: its ack floor, which a restore must keep.
func fillOrders(t *testing.T, js natsjs.JetStream, total, acked int) {
	t.Helper()
	createStream(t, js, natsjs.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Replicas: 3})
	for i := 1; i <= total; i++ {
		if _, err := js.Publish(ctxOf(t), "orders.new", []byte("order-"+strconv.Itoa(i))); err != nil {
			t.Fatalf("publishing %d: %v", i, err)
		}
	}
	cons, err := js.CreateOrUpdateConsumer(ctxOf(t), "ORDERS", natsjs.ConsumerConfig{Durable: "billing", AckPolicy: natsjs.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	// A consumer just made on three servers may take a moment to serve
	// its first pull (its leader is elected after the reply to its
	// creation): pulls go on until acked messages were acknowledged, in
	// order, so that its ack floor is acked.
	n := 0
	poll.Until(t, wait, func() error {
		batch, err := cons.Fetch(acked-n, natsjs.FetchMaxWait(2*time.Second))
		if err != nil {
			return err
		}
		for m := range batch.Messages() {
			if err := m.DoubleAck(ctxOf(t)); err != nil {
				t.Fatal(err) // the ack floor would not be acked
			}
			n++
		}
		if n != acked {
			return fmt.Errorf("acknowledged %d, want %d", n, acked)
		}
		return nil
	})
}

// takeBackup makes the claim backups and, on it, the Backup name of spec,
// and waits for it to succeed.
func takeBackup(t *testing.T, ns, name string, spec v1alpha1.BackupSpec) *v1alpha1.Backup {
	t.Helper()
	return takeBackupWatching(t, ns, name, spec, nil)
}

// takeBackupWatching is takeBackup, with seen (when not nil) told the
// Backup each time it is read while it runs.
func takeBackupWatching(t *testing.T, ns, name string, spec v1alpha1.BackupSpec, seen func(*v1alpha1.Backup)) *v1alpha1.Backup {
	t.Helper()
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backups"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	spec.VolumeClaim = &v1alpha1.BackupVolumeClaim{ClaimName: claim.Name}
	b := &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
	for _, o := range []client.Object{claim, b} {
		if err := node.Client.Create(ctxOf(t), o); err != nil {
			t.Fatal(err)
		}
	}
	poll.Until(t, 3*time.Minute, func() error {
		if err := node.Client.Get(ctxOf(t), client.ObjectKeyFromObject(b), b); err != nil {
			return err
		}
		if b.Status.Phase == v1alpha1.BackupFailed {
			t.Fatalf("the backup failed: %+v", b.Status.Conditions)
		}
		if seen != nil {
			seen(b)
		}
		if b.Status.Phase != v1alpha1.BackupSucceeded {
			return fmt.Errorf("Backup %s: phase %q, %+v", b.Name, b.Status.Phase, b.Status.Conditions)
		}
		return nil
	})
	return b
}

// restoreOrders declares the R3 Stream ORDERS on cluster, made from the
// backup at from, and waits until it is Ready for its spec.
func restoreOrders(t *testing.T, ns, cluster string, from *v1alpha1.StreamRestore) {
	t.Helper()
	restoreStream(t, &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders"}, Spec: v1alpha1.StreamSpec{
		Target: v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Name: cluster}},
		Name:   "ORDERS", Subjects: []string{"orders.>"}, Replicas: 3, Restore: from,
	}})
}

// restoreStream declares stream, made from a backup, and waits until it
// is Ready for its spec.
func restoreStream(t *testing.T, stream *v1alpha1.Stream) {
	t.Helper()
	if err := node.Client.Create(ctxOf(t), stream); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 3*time.Minute, func() error {
		if err := node.Client.Get(ctxOf(t), client.ObjectKeyFromObject(stream), stream); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(stream.Status.Conditions, v1alpha1.ConditionReady)
		if ready == nil || ready.Status != metav1.ConditionTrue || stream.Status.SyncedGeneration != stream.Generation {
			return fmt.Errorf("Stream %s not Ready: %+v", stream.Name, ready)
		}
		return nil
	})
}

// consumerResumesAfter checks that the restored stream s has its consumer
// billing, whose next message is the first past its ack floor acked.
func consumerResumesAfter(t *testing.T, s natsjs.Stream, acked int) {
	t.Helper()
	// The consumers come back with the stream, though a replicated
	// stream's leader may take a moment to serve them: after a restore it
	// proposes them to the meta group, which on a busy node (CI14: the
	// end-to-end suite beside it) took longer than 30 s. The wait is the
	// package's own bound, and a failure says what the stream holds.
	var cons natsjs.Consumer
	poll.Until(t, wait, func() (err error) {
		cons, err = s.Consumer(ctxOf(t), "billing")
		if err != nil {
			if info, infoErr := s.Info(ctxOf(t)); infoErr == nil {
				return fmt.Errorf("%w (the stream lists %d consumers)", err, info.State.Consumers)
			}
		}
		return err
	})
	next, err := cons.Next(natsjs.FetchMaxWait(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if md, err := next.Metadata(); err != nil || md.Sequence.Stream != uint64(acked+1) {
		t.Fatalf("the restored consumer resumed at %+v (%v), want stream sequence %d, after its ack floor", md, err, acked+1)
	}
}

// TestScheduledBackupKeepsTheLatest: a ScheduledBackup makes a Backup each
// time one is due, and its retention (keep one) deletes the older Backup
// with its data on the claim, once a newer one succeeded. Deleting the
// schedule keeps the Backups it made. Careless variant watched failing:
// Backups made without the data finalizer (the expired Backup went, its
// directory stayed on the claim).
func TestScheduledBackupKeepsTheLatest(t *testing.T) {
	needNode(t)
	waitOperator(t)
	ns := namespace(t)
	c := formCluster(t, ns, "sched", func(s *v1alpha1.NatsClusterSpec) { s.Replicas = ptr.To[int32](1) })
	js := e2ekit.AppJetStream(t, clientConn(t, c))
	createStream(t, js, natsjs.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}})
	if _, err := js.Publish(ctxOf(t), "events.x", []byte("e")); err != nil {
		t.Fatal(err)
	}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backups"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	sb := &v1alpha1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "events"}, Spec: v1alpha1.ScheduledBackupSpec{
		Schedule: "@every 15s",
		Backup:   v1alpha1.BackupSpec{Cluster: c.Name, Stream: "EVENTS", VolumeClaim: &v1alpha1.BackupVolumeClaim{ClaimName: claim.Name}},
		Keep:     v1alpha1.BackupRetention{Count: 1},
	}}
	for _, o := range []client.Object{claim, sb} {
		if err := node.Client.Create(ctxOf(t), o); err != nil {
			t.Fatal(err)
		}
	}
	backups := func() map[string]v1alpha1.Backup {
		list := &v1alpha1.BackupList{}
		if err := node.Client.List(ctxOf(t), list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		out := map[string]v1alpha1.Backup{}
		for _, b := range list.Items {
			out[b.Name] = b
		}
		return out
	}
	volume := func() string {
		if err := node.Client.Get(ctxOf(t), client.ObjectKeyFromObject(claim), claim); err != nil {
			t.Fatal(err)
		}
		pv := &corev1.PersistentVolume{}
		if err := node.Client.Get(ctxOf(t), client.ObjectKey{Name: claim.Spec.VolumeName}, pv); err != nil {
			t.Fatal(err)
		}
		return pv.Spec.Local.Path
	}
	var first string
	poll.Until(t, 2*time.Minute, func() error {
		for name, b := range backups() {
			if b.Status.Phase == v1alpha1.BackupFailed {
				t.Fatalf("Backup %s failed: %+v", name, b.Status.Conditions)
			}
			if b.Status.Phase == v1alpha1.BackupSucceeded {
				first = name
				return nil
			}
		}
		return fmt.Errorf("no Backup of the schedule succeeded yet: %v", backups())
	})
	firstDir := filepath.Join(volume(), "backups", first)
	if _, err := os.Stat(filepath.Join(firstDir, "backup.json")); err != nil {
		t.Fatalf("the first backup is not on the claim: %v", err)
	}
	var second string
	poll.Until(t, 2*time.Minute, func() error {
		all := backups()
		if _, ok := all[first]; ok {
			return fmt.Errorf("Backup %s is still there (%d Backups)", first, len(all))
		}
		if _, err := os.Stat(firstDir); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("the expired backup's directory is still on the claim (%v)", err)
		}
		for name, b := range all {
			if b.Status.Phase == v1alpha1.BackupSucceeded {
				second = name
				return nil
			}
		}
		return fmt.Errorf("no newer Backup succeeded: %v", all)
	})
	if _, err := os.Stat(filepath.Join(volume(), "backups", second, "backup.json")); err != nil {
		t.Fatalf("the kept backup %s is not on the claim: %v", second, err)
	}
	if err := node.Client.Get(ctxOf(t), client.ObjectKeyFromObject(sb), sb); err != nil {
		t.Fatal(err)
	}
	if sb.Status.LastSuccessfulTime == nil || sb.Status.NextScheduleTime == nil {
		t.Fatalf("the schedule's status: %+v", sb.Status)
	}
	if err := node.Client.Delete(ctxOf(t), sb); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if _, ok := backups()[second]; !ok {
			t.Fatalf("deleting the schedule deleted Backup %s", second)
		}
	}
}
