package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubenats/kubenats/test/loopback"
)

// killedCount is how many messages the killed server holds.
const killedCount = 1000

// TestKilledServerRejoinsWithItsData: a server killed with SIGKILL, as an
// out-of-memory kill would, is restarted in the same pod by the kubelet,
// rejoins the cluster (routes, a current peer of the meta group), and
// serves the stream only it holds from its claim directory, every message
// published before the kill intact.
//
// The stream has one replica, so no other server can have handed the data
// back: what the restarted server serves, it read from its own disk.
func TestKilledServerRejoinsWithItsData(t *testing.T) {
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	f := formNamed(t, ns, "crash")

	ctx, cancel := context.WithTimeout(testCtx(t), heavyTimeout)
	defer cancel()
	nc := appConn(t, f, "e2e-crash-writer", f.Pods...)
	js := appJetStream(t, nc)
	s := createStream(t, js, natsjs.StreamConfig{
		Name: "LEDGER", Subjects: []string{"ledger.>"}, Replicas: 1, Storage: natsjs.FileStorage,
	})
	// The meta leader placed the stream's one replica: that server dies.
	victim := s.CachedInfo().Cluster.Leader
	publishAll(ctx, t, nc, "LEDGER", "ledger", killedCount)
	// Our connection must not be what brings anything back.
	nc.Close()

	before := serverPods(t, f)[victim]
	beforeRun, err := runtimeOf(f.IP(victim))
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := cluster.Kill(ns, victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	after := waitRestarted(t, ns, before)
	t.Logf("%s killed; its pod Ready again after %.2fs (restartCount %d, same pod)", victim, time.Since(killed).Seconds(), natsStatus(after).RestartCount)
	afterRun, err := runtimeOf(f.IP(victim))
	if err != nil {
		t.Fatal(err)
	}
	if !afterRun.Start.After(beforeRun.Start) {
		t.Errorf("/varz start %s after the kill, %s before: not a new process", afterRun.Start, beforeRun.Start)
	}
	eventually(t, formTimeout, func() error { return rejoined(f, victim) })
	t.Logf("%s rejoined (routes to both peers, meta group of 3 with every follower current) %.2fs after the kill", victim, time.Since(killed).Seconds())

	checkDataIntact(ctx, t, f, victim)
	// The server's own word that it read the stream from its store.
	if line := restoreLine(cluster.ServerLog(ns, victim), "LEDGER"); line != "" {
		t.Logf("%s's log after the restart: %s", victim, line)
	} else {
		t.Errorf("%s's log has no line restoring stream LEDGER after the restart", victim)
	}
}

// restoreLine is the line of the last run in a server log that says it
// restored stream from disk, or "".
func restoreLine(log, stream string) string {
	runs := strings.Split(log, "=== loopback kubelet: run ")
	for _, line := range strings.Split(runs[len(runs)-1], "\n") {
		if strings.Contains(line, "Restored") && strings.Contains(line, "> "+stream+"'") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// waitRestarted waits until the pod before was restarted in place: the same
// pod (UID), one more restart, the last run ended by SIGKILL, and Ready.
func waitRestarted(t *testing.T, ns string, before *corev1.Pod) *corev1.Pod {
	t.Helper()
	restarts := natsStatus(before).RestartCount
	p := &corev1.Pod{}
	eventually(t, formTimeout, func() error {
		if err := cluster.Client.Get(testCtx(t), types.NamespacedName{Namespace: ns, Name: before.Name}, p); err != nil {
			return err
		}
		if p.UID != before.UID {
			return fmt.Errorf("pod %s was replaced (uid %s, was %s): the kubelet should restart the container", p.Name, p.UID, before.UID)
		}
		cs := natsStatus(p)
		switch {
		case cs == nil || cs.RestartCount != restarts+1:
			return fmt.Errorf("nats container status %+v, want restartCount %d", cs, restarts+1)
		case cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.Signal != int32(syscall.SIGKILL):
			return fmt.Errorf("last termination %+v, want by SIGKILL", cs.LastTerminationState.Terminated)
		case cs.State.Running == nil || !loopback.PodReady(p):
			return fmt.Errorf("nats container %+v, pod Ready %t", cs.State, loopback.PodReady(p))
		}
		return nil
	})
	return p
}

// checkDataIntact reads the stream back through a client connected to the
// restarted server alone: its one replica is there, leading, with every
// message stored once.
func checkDataIntact(ctx context.Context, t *testing.T, f *formed, victim string) {
	t.Helper()
	nc := appConn(t, f, "e2e-crash-reader", victim)
	js := appJetStream(t, nc)
	var s natsjs.Stream
	eventually(t, wait, func() error {
		var err error
		if s, err = js.Stream(ctx, "LEDGER"); err != nil {
			return err
		}
		info := s.CachedInfo()
		if info.Cluster == nil || info.Cluster.Leader != victim || info.State.Msgs != killedCount {
			return fmt.Errorf("stream LEDGER: cluster %+v, %d messages; want led by %s with %d", info.Cluster, info.State.Msgs, victim, killedCount)
		}
		return nil
	})
	// Every message once, at some sequence: an asynchronous publish that
	// met no responders while the stream's subject was still spreading
	// over the routes is retried after later ones, so the order of
	// sequences need not be the order of publishing.
	want := map[string]bool{}
	for i := range killedCount {
		want[string(messagePayload(i))] = true
	}
	for seq := uint64(1); seq <= killedCount; seq++ {
		msg, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("reading sequence %d back: %v", seq, err)
		}
		if !want[string(msg.Data)] {
			t.Fatalf("sequence %d holds %q: not published, or stored twice", seq, msg.Data)
		}
		delete(want, string(msg.Data))
	}
	t.Logf("all %d messages read back from %s", killedCount, victim)
}
