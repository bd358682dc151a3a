package realnode_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/realnode"
	"github.com/kubenats/kubenats/test/s3server"
)

// storeSecret is the opted-in Secret of ns holding store's keys and CA.
func storeSecret(t *testing.T, ns string, store *s3server.Server) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s3",
		Labels: map[string]string{v1alpha1.SecretAllowLabel: v1alpha1.SecretAllowValue}},
		StringData: map[string]string{"accessKeyID": store.AccessKey, "secretAccessKey": store.SecretKey, "ca.crt": string(store.CAPEM)}}
	if err := node.Client.Create(ctxOf(t), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// publisher publishes order-<n> to ORDERS until stopped, one at a time,
// and keeps what the stream acknowledged: sequence to payload.
type publisher struct {
	mu    sync.Mutex
	acked map[uint64]string
	last  uint64
	stop  chan struct{}
	done  chan error
}

func startPublisher(js natsjs.JetStream, from int) *publisher {
	p := &publisher{acked: map[uint64]string{}, stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		for i := from; ; i++ {
			select {
			case <-p.stop:
				p.done <- nil
				return
			case <-time.After(5 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			body := "order-" + strconv.Itoa(i)
			ack, err := js.Publish(ctx, "orders.new", []byte(body))
			cancel()
			if err != nil {
				p.done <- fmt.Errorf("publishing %s: %w", body, err)
				return
			}
			p.mu.Lock()
			p.acked[ack.Sequence], p.last = body, ack.Sequence
			p.mu.Unlock()
		}
	}()
	return p
}

// halt stops the publisher and returns what was acknowledged.
func (p *publisher) halt(t *testing.T) (map[uint64]string, uint64) {
	t.Helper()
	close(p.stop)
	if err := <-p.done; err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acked, p.last
}

// TestObjectStoreBackupOutlivesItsNamespace: a ScheduledBackup into a real
// S3 store (SeaweedFS on the host, over TLS, its keys mounted from an
// opted-in Secret) takes a stream under acknowledged publishing, by a Job
// on the real kubelet; the whole namespace is then lost (cluster,
// claims, schedule, Backups, Secret), and the backups stay in the bucket;
// in a new namespace a Stream whose spec names the store and the key gets
// the stream back: every acknowledged message up to the backup's last
// sequence under its own sequence number, and the consumer at its ack
// floor. Careless variants watched failing: the restore Job given the
// claim's place for a store's backup (no Job could be made: the Stream
// stayed RestoreNotReady), and the data finalizer removing the data of
// every deleted Backup of a schedule (the namespace never went: no
// removal Job can be made in a namespace being deleted).
func TestObjectStoreBackupOutlivesItsNamespace(t *testing.T) {
	needNode(t)
	waitOperator(t)
	root, err := realnode.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	store := s3server.Start(t, s3server.Binary(root), t.TempDir(), realnode.HostAddress())
	bucket := &v1alpha1.S3Bucket{Endpoint: store.Endpoint, Bucket: store.Bucket, Prefix: "prod", CredentialsSecret: "s3", CASecret: "s3"}

	lost := namespace(t)
	c := formCluster(t, lost, "st", nil)
	js := e2ekit.AppJetStream(t, clientConn(t, c))
	const first, acked = 200, 80
	fillOrders(t, js, first, acked)
	pub := startPublisher(js, first+1)
	storeSecret(t, lost, store)
	sb := &v1alpha1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Namespace: lost, Name: "orders"}, Spec: v1alpha1.ScheduledBackupSpec{
		Schedule: "@every 10s", Keep: v1alpha1.BackupRetention{Count: 10},
		Backup: v1alpha1.BackupSpec{Cluster: c.Name, Stream: "ORDERS", S3: bucket}}}
	if err := node.Client.Create(ctxOf(t), sb); err != nil {
		t.Fatal(err)
	}
	var b v1alpha1.Backup
	poll.Until(t, 3*time.Minute, func() error {
		var list v1alpha1.BackupList
		if err := node.Client.List(ctxOf(t), &list, client.InNamespace(lost), client.MatchingLabels{v1alpha1.LabelScheduledBackup: sb.Name}); err != nil {
			return err
		}
		for _, item := range list.Items {
			if item.Status.Phase == v1alpha1.BackupFailed {
				t.Fatalf("Backup %s failed: %+v", item.Name, item.Status.Conditions)
			}
			if item.Status.Phase == v1alpha1.BackupSucceeded {
				b = item
				return nil
			}
		}
		return fmt.Errorf("no Backup of the schedule has succeeded yet (%d made)", len(list.Items))
	})
	published, last := pub.halt(t)
	st := b.Status
	if st.Path != "s3://"+store.Bucket+"/prod/"+b.Name || st.Consumers != 1 || st.LastSequence <= first || st.LastSequence >= last {
		t.Fatalf("Backup %s: %+v; want one taken under publishing (its last sequence past %d, before the publisher's last, %d)", b.Name, st, first, last)
	}
	t.Logf("Backup %s holds sequences 1 to %d; the publisher went on to %d", b.Name, st.LastSequence, last)

	// The namespace is lost, with everything in it.
	if err := node.Client.Patch(ctxOf(t), c, client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+plan.AnnotationDeleteWithData+`":"true"}}}`))); err != nil {
		t.Fatal(err)
	}
	if err := node.Client.Delete(ctxOf(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: lost}}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 3*time.Minute, func() error {
		err := node.Client.Get(ctxOf(t), client.ObjectKey{Name: lost}, &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errors.Join(err, fmt.Errorf("namespace %s not gone yet", lost))
	})
	s3, err := store.Client()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s3.StatObject(ctxOf(t), store.Bucket, "prod/"+b.Name+"/backup.json", minio.StatObjectOptions{}); err != nil {
		t.Fatalf("the backup left the bucket with its namespace: %v", err)
	}

	ns := namespace(t)
	storeSecret(t, ns, store)
	again := formCluster(t, ns, "st2", nil)
	restoreOrders(t, ns, again.Name, &v1alpha1.StreamRestore{S3: bucket, Path: "prod/" + b.Name})
	s, err := e2ekit.AppJetStream(t, clientConn(t, again)).Stream(ctxOf(t), "ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	if info := s.CachedInfo(); info.State.FirstSeq != 1 || info.State.LastSeq != st.LastSequence || info.State.Msgs != st.LastSequence {
		t.Fatalf("restored: %+v; want sequences 1 to %d", info.State, st.LastSequence)
	}
	for seq := uint64(1); seq <= st.LastSequence; seq++ {
		want, ok := published[seq]
		if seq <= first {
			want, ok = "order-"+strconv.FormatUint(seq, 10), true
		}
		if !ok {
			t.Fatalf("sequence %d was never acknowledged to the publisher", seq)
		}
		m, err := s.GetMsg(ctxOf(t), seq)
		if err != nil || string(m.Data) != want {
			t.Fatalf("restored sequence %d: %v, want %q", seq, err, want)
		}
	}
	consumerResumesAfter(t, s, acked)
}
