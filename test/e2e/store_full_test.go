package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/loopback"
)

// storeClaim is the claim of each server in the full-store test: small,
// since the test fills it, three times over.
const storeClaim = "256Mi"

// TestFullStoreIsAConditionNotACrashLoop: streams published to until the
// servers refuse fill stores to max_file_store. The headroom the operator
// leaves in the claim (an ext4 filesystem of the claim's size in the
// loopback cluster) holds: no write meets a full disk, JetStream stays on,
// no server restarts, every server stays Ready and the stream serves
// reads, over a window. The NatsCluster says StorageAvailable=False
// (StoreFull), naming the full servers, with a Warning event, and True
// again with a Normal event once there is room.
//
// First an R1 stream fills its one server's store, and a purge makes room.
// Then an R3 stream fills all three: nats-server's Raft nodes on a server
// past its limit neither campaign nor follow, so the stream loses its
// leader and a purge (which its leader carries out) cannot run; reads are
// direct gets, which every replica answers, and deleting the stream (a
// meta group operation) makes room.
func TestFullStoreIsAConditionNotACrashLoop(t *testing.T) {
	// Long and mostly waiting: runs beside the other parallel tests (main_test.go).
	e2ekit.Parallel(t, 132*time.Second)
	f := formCluster(t, func(s *v1alpha1.NatsClusterSpec) {
		size := resource.MustParse(storeClaim)
		s.JetStream.FileStore.Size = &size
	})
	claim := resource.MustParse(storeClaim)
	limit := render.FileStoreLimit(claim.Value())
	ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Minute)
	defer cancel()
	nc := appConn(t, f, "e2e-filler", f.Pods...)
	defer nc.Close()
	js := appJetStream(t, nc)
	before := serverPods(t, f)

	// R1: one server's store.
	one := createStream(t, js, natsjs.StreamConfig{
		Name: "ONE", Subjects: []string{"one.>"}, Replicas: 1, Storage: natsjs.FileStorage,
	})
	holder := one.CachedInfo().Cluster.Leader
	accepted, refusal := fillStream(ctx, t, js, "one.x", 2*limit)
	t.Logf("R1 on %s took %d MiB before the refusal %q (max_file_store %d MiB of a %s claim)", holder, accepted>>20, refusal, limit>>20, storeClaim)
	checkStoresFull(t, f, limit, holder)
	waitStorageCondition(t, f, metav1.ConditionFalse, v1alpha1.ReasonStoreFull, holder)
	waitEvent(t, f.NS, v1alpha1.ReasonStoreFull)
	checkServingWhileFull(ctx, t, f, before, one)
	purgeStream(t, one)
	waitStorageCondition(t, f, metav1.ConditionTrue, v1alpha1.ReasonStorageAvailable)
	waitEvent(t, f.NS, v1alpha1.ReasonStorageAvailable)
	pubCtx, cancelPub := context.WithTimeout(ctx, wait)
	defer cancelPub()
	if _, err := js.Publish(pubCtx, "one.x", []byte("room again")); err != nil {
		t.Fatalf("publishing after the purge: %v", err)
	}

	// R3: every server's store.
	all := createStream(t, js, natsjs.StreamConfig{
		Name: "ALL", Subjects: []string{"all.>"}, Replicas: 3, Storage: natsjs.FileStorage, AllowDirect: true,
	})
	accepted, refusal = fillStream(ctx, t, js, "all.x", 2*limit)
	t.Logf("R3 took %d MiB before the refusal %q", accepted>>20, refusal)
	checkStoresFull(t, f, limit, f.Pods...)
	waitStorageCondition(t, f, metav1.ConditionFalse, v1alpha1.ReasonStoreFull, f.Pods...)
	checkServingWhileFull(ctx, t, f, before, all)
	purgeCtx, cancelPurge := context.WithTimeout(ctx, 5*time.Second)
	t.Logf("purging the R3 stream with every replica full: %v", all.Purge(purgeCtx))
	cancelPurge()
	deleteStream(t, js, "ALL")
	waitStorageCondition(t, f, metav1.ConditionTrue, v1alpha1.ReasonStorageAvailable)
	checkServersUntouched(t, f, before)
}

// checkStoresFull: the servers' own word, on /jsz, that the stores of
// full are at their limit (within a message), the others' not, and
// JetStream on everywhere. A follower may still be applying what its
// leader took before the refusal: it is given a while.
func checkStoresFull(t *testing.T, f *formed, limit int64, full ...string) {
	t.Helper()
	eventually(t, wait, func() error {
		for _, pod := range f.Pods {
			var jsz struct {
				Disabled bool   `json:"disabled"`
				Storage  uint64 `json:"storage"`
				Config   struct {
					MaxStorage int64 `json:"max_storage"`
				} `json:"config"`
			}
			if err := monitor(f.IP(pod), "/jsz", &jsz); err != nil {
				return err
			}
			wantFull := slices.Contains(full, pod)
			use := natsmon.StoreUse{Used: jsz.Storage, Limit: jsz.Config.MaxStorage}
			if jsz.Disabled || jsz.Config.MaxStorage != limit || use.Full() != wantFull {
				return fmt.Errorf("%s: /jsz disabled %t, storage %d of %d; want JetStream on, the store full: %t", pod, jsz.Disabled, jsz.Storage, jsz.Config.MaxStorage, wantFull)
			}
		}
		return nil
	})
}

// checkServingWhileFull: over a window, the same pods, never restarted,
// Ready, serving the stream's first message; the claims' filesystems not
// full, and no server met a full disk.
func checkServingWhileFull(ctx context.Context, t *testing.T, f *formed, before map[string]*corev1.Pod, stream natsjs.Stream) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		checkServersUntouched(t, f, before)
		readCtx, cancelRead := context.WithTimeout(ctx, wait)
		_, err := stream.GetMsg(readCtx, 1)
		cancelRead()
		if err != nil {
			t.Fatalf("reading the full stream %s: %v", stream.CachedInfo().Config.Name, err)
		}
		time.Sleep(2 * time.Second)
	}
	claims, err := serverClaims(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range claims {
		var fs syscall.Statfs_t
		if err := syscall.Statfs(claimDir(c), &fs); err != nil {
			t.Fatal(err)
		}
		free := int64(fs.Bavail) * fs.Bsize
		t.Logf("%s: %d MiB of its filesystem (%d MiB) free", c.Name, free>>20, (int64(fs.Blocks)*fs.Bsize)>>20)
		if free <= 0 {
			t.Errorf("%s: the claim's filesystem is full", c.Name)
		}
	}
	for _, pod := range f.Pods {
		log := cluster.ServerLog(f.NS, pod)
		for _, bad := range []string{"no space left", "will be DISABLED"} {
			if strings.Contains(log, bad) {
				t.Errorf("%s's log says %q: the disk filled before the store limit", pod, bad)
			}
		}
	}
}

// waitEvent waits for an event of that reason in ns.
func waitEvent(t *testing.T, ns, reason string) {
	t.Helper()
	eventually(t, wait, func() error {
		if eventsWithReason(t, ns, reason) == 0 {
			return fmt.Errorf("no %s event", reason)
		}
		return nil
	})
}

// fillStream publishes 64 KiB messages to subject until the stream refuses
// one for want of storage, or max bytes were accepted. Other errors (a
// leader stepping down on the refusal, a publish timing out on a busy
// machine) are retried for a while: a minute without an accepted publish
// fails the test (a store whose disk filled first stops answering).
// It returns the bytes accepted and the refusal.
func fillStream(ctx context.Context, t *testing.T, js natsjs.JetStream, subject string, max int64) (int64, string) {
	t.Helper()
	payload := make([]byte, 64<<10)
	for i := range payload {
		payload[i] = byte(i)
	}
	var accepted int64
	progress := time.Now()
	for accepted < max {
		pubCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := js.Publish(pubCtx, subject, payload)
		cancel()
		var apiErr *natsjs.APIError
		switch {
		case err == nil:
			accepted += int64(len(payload))
			progress = time.Now()
		case errors.As(err, &apiErr) && (apiErr.ErrorCode == natsjs.ErrorCode(server.JSInsufficientResourcesErr) ||
			apiErr.ErrorCode == natsjs.ErrorCode(server.JSStorageResourcesExceededErr)):
			return accepted, err.Error()
		case ctx.Err() != nil:
			t.Fatalf("filling the stream: %v", ctx.Err())
		case time.Since(progress) > time.Minute:
			t.Fatalf("filling the stream: nothing accepted for %s after %d MiB, and no refusal for want of storage; the last error: %v",
				time.Since(progress).Round(time.Second), accepted>>20, err)
		}
	}
	t.Fatalf("the stream accepted %d bytes, twice max_file_store, and refused nothing", accepted)
	return 0, ""
}

// waitStorageCondition waits for the NatsCluster's StorageAvailable to have
// the status and reason, naming exactly the full servers; the operator
// looks every 30 s.
func waitStorageCondition(t *testing.T, f *formed, status metav1.ConditionStatus, reason string, full ...string) {
	t.Helper()
	c := &v1alpha1.NatsCluster{}
	began := time.Now()
	eventually(t, 2*time.Minute, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(f.Cluster), c); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionStorageAvailable)
		if cond == nil || cond.Status != status || cond.Reason != reason {
			return fmt.Errorf("StorageAvailable %+v, want %s/%s", cond, status, reason)
		}
		for _, pod := range f.Pods {
			if named := strings.Contains(cond.Message, pod+" "); named != slices.Contains(full, pod) {
				return fmt.Errorf("StorageAvailable message %q: names %s %t, want %t", cond.Message, pod, named, !named)
			}
		}
		return nil
	})
	t.Logf("StorageAvailable %s (%s) %.1fs later", status, reason, time.Since(began).Seconds())
}

// checkServersUntouched fails the test unless every server is the pod it
// was, never restarted since, and Ready.
func checkServersUntouched(t *testing.T, f *formed, before map[string]*corev1.Pod) {
	t.Helper()
	for _, name := range f.Pods {
		p := &corev1.Pod{}
		if err := cluster.Client.Get(testCtx(t), types.NamespacedName{Namespace: f.NS, Name: name}, p); err != nil {
			t.Fatal(err)
		}
		was, now := natsStatus(before[name]), natsStatus(p)
		switch {
		case p.UID != before[name].UID:
			t.Fatalf("%s was replaced", name)
		case now == nil || was == nil || now.RestartCount != was.RestartCount:
			t.Fatalf("%s: nats container %+v, restarted since %+v", name, now, was)
		case !loopback.PodReady(p):
			t.Fatalf("%s is not Ready: %+v", name, p.Status.Conditions)
		}
	}
}
