package jetstreamcontroller

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/pause"
)

// TestJetStreamStatusForGitOpsTools: each way a pass ends, as GitOps
// tools (kstatus) read the status it leads to, and the generation the
// server holds (syncedGeneration), which the next pass's drift check
// reads. The resource is at generation 3; the server held generation 2.
//
// Careless variants, each run: observedGeneration marked only when
// synced, as before (a spec the server refused reads InProgress forever,
// never Failed), a refusal that marks generation 3 synced (the next wake
// would read it in sync and report Ready with the server on generation
// 2), every failure stalled regardless of retry (an unreachable system
// read as Failed).
func TestJetStreamStatusForGitOpsTools(t *testing.T) {
	now := metav1.NewTime(time.Date(2024, 1, 2, 10, 0, 0, 0, time.UTC))
	synced := &jetstream.Observed{Hash: "h3"}
	for _, tc := range []struct {
		name       string
		prev       v1alpha1.JetStreamStatus
		out        outcome
		want       kstatus.Status
		wantSynced int64
	}{
		{"synced", syncedAt(2), outcome{ready: true, reason: reasonSynced, message: "matches", observed: synced}, kstatus.CurrentStatus, 3},
		{"the NATS system unreachable", syncedAt(2), outcome{reason: reasonConnectionFailed, message: connectionFailedMessage, retry: true},
			kstatus.InProgressStatus, 2},
		{"the stream of a consumer not there yet", v1alpha1.JetStreamStatus{}, outcome{reason: reasonStreamNotFound, message: "m", retry: true},
			kstatus.InProgressStatus, 0},
		{"refused by the server", syncedAt(2), outcome{reason: reasonServerError, message: "the server refused: subjects overlap (error code 10065)"},
			kstatus.FailedStatus, 2},
		{"a spec the operator cannot translate", syncedAt(2), outcome{reason: reasonInvalidSpec, message: "m"}, kstatus.FailedStatus, 2},
		{"another's object on the server", v1alpha1.JetStreamStatus{}, outcome{reason: reasonAlreadyExists, message: "m"}, kstatus.FailedStatus, 0},
		{"another's object, its owner not confirmed gone yet", v1alpha1.JetStreamStatus{}, outcome{reason: reasonAlreadyExists, message: "m", retry: true},
			kstatus.InProgressStatus, 0},
		// A status written before syncedGeneration: observedGeneration was
		// the synced generation.
		{"refused, after a status of an older operator", v1alpha1.JetStreamStatus{ObservedGeneration: 2, ServerConfigHash: "h2"},
			outcome{reason: reasonServerError, message: "m"}, kstatus.FailedStatus, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders", Generation: 3}}
			s.Status = jetStreamStatus(s, &tc.prev, tc.out, pause.State{}, now)
			res := kstatusOf(t, s)
			if res.Status != tc.want {
				t.Errorf("kstatus = %s (%s), want %s; status %+v", res.Status, res.Message, tc.want, s.Status)
			}
			if s.Status.ObservedGeneration != 3 {
				t.Errorf("observedGeneration %d, want 3", s.Status.ObservedGeneration)
			}
			if got := syncedGeneration(&s.Status); got != tc.wantSynced {
				t.Errorf("synced generation %d, want %d", got, tc.wantSynced)
			}
			ready := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionReady)
			if ready == nil || ready.Reason != tc.out.reason {
				t.Errorf("Ready %+v, want reason %s", ready, tc.out.reason)
			}
		})
	}
}

// TestPausedJetStreamStatusForGitOpsTools: a paused resource whose spec
// changed (generation 3, the server on 2) reads InProgress, never Failed
// (it waits for the resume, not for a fix) and never Current (the change
// is not carried out): its observedGeneration stays at 2. Careless
// variants: the generation marked observed while paused (kstatus read
// the Paused reason as Failed through Stalled, or Current once Ready
// flips), Stalled set while paused.
func TestPausedJetStreamStatusForGitOpsTools(t *testing.T) {
	s := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders", Generation: 3}}
	paused := pause.State{Paused: true, Reason: "ReconciliationPaused", Message: "m"}
	prev := syncedAt(2)
	s.Status = jetStreamStatus(s, &prev, outcome{reason: "ReconciliationPaused", message: "a spec change waits"}, paused, metav1.Now())
	res := kstatusOf(t, s)
	if res.Status != kstatus.InProgressStatus || s.Status.ObservedGeneration != 2 {
		t.Fatalf("kstatus = %s (%s), observedGeneration %d; want InProgress at 2", res.Status, res.Message, s.Status.ObservedGeneration)
	}
}

// syncedAt is the status of a resource whose generation gen the server
// holds.
func syncedAt(gen int64) v1alpha1.JetStreamStatus {
	return v1alpha1.JetStreamStatus{ObservedGeneration: gen, SyncedGeneration: gen, ServerConfigHash: "h2",
		Conditions: []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: reasonSynced, ObservedGeneration: gen}}}
}

// kstatusOf is what kstatus reads of obj.
func kstatusOf(t *testing.T, obj any) *kstatus.Result {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	res, err := kstatus.Compute(&unstructured.Unstructured{Object: m})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestRestoreProgressLastsAsLongAsTheRestore: a pass waiting for its
// restore Job shows how far it has come; the pass after it ends shows
// nothing of it. Careless variant watched failing: the progress kept from
// the last pass that had one, as Mirror is (a restored stream still
// showing a restore half way).
func TestRestoreProgressLastsAsLongAsTheRestore(t *testing.T) {
	now := metav1.NewTime(time.Date(2024, 1, 2, 10, 0, 0, 0, time.UTC))
	s := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders", Generation: 1}}
	half := &v1alpha1.TransferProgress{Stream: "ORDERS", DoneBytes: 50, TotalBytes: 100, ObservedAt: now}
	s.Status = jetStreamStatus(s, &s.Status, outcome{reason: reasonRestoring, message: "m", retry: true, restore: half}, pause.State{}, now)
	if s.Status.Restore == nil || *s.Status.Restore != *half {
		t.Fatalf("while restoring: %+v", s.Status.Restore)
	}
	s.Status = jetStreamStatus(s, &s.Status, outcome{ready: true, reason: reasonSynced, message: "m", observed: &jetstream.Observed{Hash: "h"}}, pause.State{}, now)
	if s.Status.Restore != nil {
		t.Fatalf("after the restore: %+v", s.Status.Restore)
	}
}
