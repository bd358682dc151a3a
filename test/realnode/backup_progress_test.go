package realnode_test

import (
	"crypto/rand"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// TestBackupProgressAndRateOnTheRealNode: a Backup held to 1 MiB/s
// (spec.maxMiBPerSecond) of a 12 MiB stream runs for about 12 s, and
// while it runs its status shows how far its pod has come, read by the
// operator from the pod on the node's network: part of the stream, never
// going back. Once it succeeded the progress is gone and the backup is
// whole. Careless variant watched failing: the pod's progress taken
// before it began a stream (status said 0 of 0 bytes of no stream, the
// first time this test ran). Without the rate, the backup is over in
// well under a second here, before the operator's first look.
func TestBackupProgressAndRateOnTheRealNode(t *testing.T) {
	needNode(t)
	waitOperator(t)
	ns := namespace(t)
	c := formCluster(t, ns, "paced", func(s *v1alpha1.NatsClusterSpec) { s.Replicas = ptr.To[int32](1) })
	js := e2ekit.AppJetStream(t, clientConn(t, c))
	createStream(t, js, natsjs.StreamConfig{Name: "BULK", Subjects: []string{"bulk"}})
	const messages, size = 96, 128 << 10 // 12 MiB, incompressible
	payload := make([]byte, size)
	for range messages {
		if _, err := rand.Read(payload); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctxOf(t), "bulk", payload); err != nil {
			t.Fatal(err)
		}
	}

	var seen []v1alpha1.TransferProgress
	b := takeBackupWatching(t, ns, "bulk-paced", v1alpha1.BackupSpec{Cluster: c.Name, Stream: "BULK", MaxMiBPerSecond: 1},
		func(b *v1alpha1.Backup) {
			if p := b.Status.Progress; p != nil && (len(seen) == 0 || seen[len(seen)-1] != *p) {
				seen = append(seen, *p)
			}
		})
	if took, err := time.ParseDuration(b.Status.Duration); err != nil || took < 9*time.Second {
		t.Errorf("12 MiB at 1 MiB/s took %s (%v), want about 12 s", b.Status.Duration, err)
	}
	if b.Status.Messages != messages || b.Status.Progress != nil {
		t.Errorf("the backup holds %d messages, progress %+v; want %d and none once done", b.Status.Messages, b.Status.Progress, messages)
	}
	if len(seen) == 0 {
		t.Fatal("no progress in status while the backup ran")
	}
	for i, p := range seen {
		if p.Stream != "BULK" || p.DoneBytes <= 0 || p.DoneBytes >= int64(b.Status.DataSize) || p.TotalBytes < messages*size {
			t.Errorf("progress %+v: want part of BULK's archive (%d bytes) of the stream's bytes", p, b.Status.DataSize)
		}
		if i > 0 && p.DoneBytes < seen[i-1].DoneBytes {
			t.Errorf("progress went back: %d after %d", p.DoneBytes, seen[i-1].DoneBytes)
		}
	}
	t.Logf("progress seen: %+v", seen)
}
