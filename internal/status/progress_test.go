package status

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// kstatusOf is what GitOps tools make of obj: kstatus' own reading of it,
// as an unstructured object the way the API server serves it.
func kstatusOf(t *testing.T, obj runtime.Object) *kstatus.Result {
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

// TestNatsClusterHealthForGitOpsTools: kstatus reads each phase of a
// NatsCluster right, from the status the pure function computes: in
// progress while it forms, rolls or scales, current when Ready, failed
// when it cannot go on. Also that a condition of a previous phase goes.
//
// Careless variants, each run: Stalled never written (every fatal
// blocker read as InProgress: kstatus falls back on Ready False),
// Reconciling written whatever Ready says (a Ready cluster InProgress
// forever), Reconciling and Stalled carried over from the previous status
// (the cluster Ready again after a stall still Failed).
func TestNatsClusterHealthForGitOpsTools(t *testing.T) {
	stalledBefore := func(c *v1alpha1.NatsCluster) {
		c.Status.Conditions = []metav1.Condition{
			{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonNameConflict},
			{Type: v1alpha1.ConditionStalled, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonNameConflict},
		}
	}
	for _, tc := range []struct {
		name string
		obs  ClusterObservation
		want kstatus.Status
		// wantCondition is Reconciling, Stalled or "" (neither present).
		wantCondition string
	}{
		{"forming: no StatefulSet yet", ClusterObservation{Cluster: natsCluster(3)}, kstatus.InProgressStatus, v1alpha1.ConditionReconciling},
		{"forming: servers not ready", ClusterObservation{Cluster: natsCluster(3), StatefulSet: settled(3, 1)}, kstatus.InProgressStatus, v1alpha1.ConditionReconciling},
		{"rolling", ClusterObservation{Cluster: natsCluster(3, wasReady), StatefulSet: changed(settled(3, 3), func(s *appsv1.StatefulSet) {
			s.Status.UpdateRevision = "orders-7a1b"
		})}, kstatus.InProgressStatus, v1alpha1.ConditionReconciling},
		{"rolling: the operator replaces a server", ClusterObservation{Cluster: natsCluster(3, wasReady), StatefulSet: settled(3, 2),
			Blocker: &Blocker{Reason: v1alpha1.ReasonProgressing, Message: "rolling update: replacing server orders-2"}}, kstatus.InProgressStatus, v1alpha1.ConditionReconciling},
		{"scaling down", ClusterObservation{Cluster: natsCluster(3), StatefulSet: settled(5, 5)}, kstatus.InProgressStatus, v1alpha1.ConditionReconciling},
		{"a server reloading", ClusterObservation{Cluster: natsCluster(3, wasReady), StatefulSet: settled(3, 3), ConfigBehind: []string{"orders-1"}},
			kstatus.InProgressStatus, v1alpha1.ConditionReconciling},
		{"a hung server", ClusterObservation{Cluster: natsCluster(3, wasReady), StatefulSet: settled(3, 3), Hung: "orders-1 does not answer"},
			kstatus.InProgressStatus, v1alpha1.ConditionReconciling},
		{"an API error that passes", ClusterObservation{Cluster: natsCluster(3), StatefulSet: settled(3, 3),
			Blocker: &Blocker{Reason: v1alpha1.ReasonApplyFailed, Message: "conflict"}}, kstatus.InProgressStatus, v1alpha1.ConditionReconciling},
		{"Ready", ClusterObservation{Cluster: natsCluster(3), StatefulSet: settled(3, 3)}, kstatus.CurrentStatus, ""},
		{"Ready again after a stall", ClusterObservation{Cluster: natsCluster(3, stalledBefore), StatefulSet: settled(3, 3)}, kstatus.CurrentStatus, ""},
		{"a name conflict", ClusterObservation{Cluster: natsCluster(3), StatefulSet: settled(3, 3),
			Blocker: &Blocker{Reason: v1alpha1.ReasonNameConflict, Message: "Service orders is not ours", Fatal: true}}, kstatus.FailedStatus, v1alpha1.ConditionStalled},
		{"a refused Secret before anything exists", ClusterObservation{Cluster: natsCluster(3),
			Blocker: &Blocker{Reason: v1alpha1.ReasonSecretNotFound, Message: "Secret mine", Fatal: true}}, kstatus.FailedStatus, v1alpha1.ConditionStalled},
		{"a halted rollout", ClusterObservation{Cluster: natsCluster(3, wasReady), StatefulSet: settled(3, 2),
			Blocker: &Blocker{Reason: v1alpha1.ReasonRolloutHalted, Message: "rolling update halted", Fatal: true}}, kstatus.FailedStatus, v1alpha1.ConditionStalled},
		{"a refused version change", ClusterObservation{Cluster: natsCluster(3, wasReady), StatefulSet: settled(3, 3),
			Blocker: &Blocker{Reason: v1alpha1.ReasonVersionChangeRefused, Message: "2.15 needs 2.14.7 first", Fatal: true}}, kstatus.FailedStatus, v1alpha1.ConditionStalled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.obs.Now = now
			c := tc.obs.Cluster.DeepCopy()
			c.Status = NatsCluster(tc.obs)
			if got := kstatusOf(t, c); got.Status != tc.want {
				t.Errorf("kstatus = %s (%s), want %s; conditions %+v", got.Status, got.Message, tc.want, c.Status.Conditions)
			}
			checkProgressConditions(t, c.Status.Conditions, tc.wantCondition)
		})
	}
}

// checkProgressConditions: want (Reconciling or Stalled) is present, True,
// with Ready's reason; the other is absent; neither when want is "".
func checkProgressConditions(t *testing.T, conds []metav1.Condition, want string) {
	t.Helper()
	ready := meta.FindStatusCondition(conds, v1alpha1.ConditionReady)
	for _, typ := range []string{v1alpha1.ConditionReconciling, v1alpha1.ConditionStalled} {
		got := meta.FindStatusCondition(conds, typ)
		switch {
		case typ != want && got != nil:
			t.Errorf("%s present: %+v", typ, got)
		case typ == want && got == nil:
			t.Errorf("no %s condition in %+v", typ, conds)
		case typ == want && (got.Status != metav1.ConditionTrue || got.Reason != ready.Reason || got.Message != ready.Message):
			t.Errorf("%s = %+v, want True with Ready's reason and message %+v", typ, got, ready)
		}
	}
}

// TestNatsClusterObservesItsGenerationInEveryPhase: kstatus reads a status
// whose observedGeneration lags as InProgress, whatever it says, so a
// refused spec must be observed too.
func TestNatsClusterObservesItsGenerationInEveryPhase(t *testing.T) {
	for _, b := range []*Blocker{nil, {Reason: v1alpha1.ReasonProgressing, Message: "m"}, {Reason: v1alpha1.ReasonNameConflict, Message: "m", Fatal: true}} {
		c := natsCluster(3, func(c *v1alpha1.NatsCluster) { c.Generation = 9; c.Status.ObservedGeneration = 8 })
		st := NatsCluster(ClusterObservation{Cluster: c, StatefulSet: settled(3, 3), Blocker: b, Now: now})
		if st.ObservedGeneration != 9 {
			t.Errorf("blocker %+v: observedGeneration %d, want 9", b, st.ObservedGeneration)
		}
	}
}

// TestReadyAloneHealthForGitOpsTools: the kinds with Ready alone (a
// Stream, a Consumer, a KeyValue, an ObjectStore, a NatsAccount, a
// NatsUser) read as kstatus should for each way a pass ends, with the
// generation observed.
//
// Careless variant, run: Stalled left out of ReadyConditions (a refused
// spec reads InProgress).
func TestReadyAloneHealthForGitOpsTools(t *testing.T) {
	prevStalled := []metav1.Condition{
		{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: "ServerError"},
		{Type: v1alpha1.ConditionStalled, Status: metav1.ConditionTrue, Reason: "ServerError"},
	}
	for _, tc := range []struct {
		name          string
		prev          []metav1.Condition
		pass          Pass
		want          kstatus.Status
		wantCondition string
	}{
		{"synced", nil, Pass{Ready: true, Reason: "Synced", Message: "matches"}, kstatus.CurrentStatus, ""},
		{"synced after a refusal", prevStalled, Pass{Ready: true, Reason: "Synced", Message: "matches"}, kstatus.CurrentStatus, ""},
		{"waiting for the NATS system", nil, Pass{Reason: "ConnectionFailed", Message: "cannot connect"}, kstatus.InProgressStatus, v1alpha1.ConditionReconciling},
		{"waiting after a refusal", prevStalled, Pass{Reason: "ClusterNotReady", Message: "not ready"}, kstatus.InProgressStatus, v1alpha1.ConditionReconciling},
		{"refused by the server", nil, Pass{Stalled: true, Reason: "ServerError", Message: "subjects overlap"}, kstatus.FailedStatus, v1alpha1.ConditionStalled},
		// Stalled says nothing once Ready is True: never both.
		{"ready wins over a stray stall", nil, Pass{Ready: true, Stalled: true, Reason: "Synced", Message: "m"}, kstatus.CurrentStatus, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop", Generation: 3}}
			s.Status.ObservedGeneration = 3
			s.Status.Conditions = ReadyConditions(tc.prev, 3, now, tc.pass)
			if got := kstatusOf(t, s); got.Status != tc.want {
				t.Errorf("kstatus = %s (%s), want %s; conditions %+v", got.Status, got.Message, tc.want, s.Status.Conditions)
			}
			if s.Status.Conditions[0].Type != v1alpha1.ConditionReady {
				t.Errorf("first condition %s, want Ready", s.Status.Conditions[0].Type)
			}
			checkProgressConditions(t, s.Status.Conditions, tc.wantCondition)
		})
	}
}

// TestAccountPassStallsOnlyWhatNeedsAChange: which Ready reasons of a
// NatsAccount and a NatsUser GitOps tools read as Failed.
func TestAccountPassStallsOnlyWhatNeedsAChange(t *testing.T) {
	for _, tc := range []struct {
		reason string
		want   bool
	}{
		{v1alpha1.ReasonClusterNotAdmitted, true},
		{v1alpha1.ReasonAccountKeysMissing, true},
		{v1alpha1.ReasonAccountKeysMismatch, true},
		{v1alpha1.ReasonNameConflict, true},
		{v1alpha1.ReasonSecretInvalid, true},
		{v1alpha1.ReasonPushFailed, false},
		{v1alpha1.ReasonImportNotExported, false},
		{v1alpha1.ReasonAccountNotFound, false},
		{v1alpha1.ReasonApplyFailed, false},
	} {
		if got := AccountPass(false, tc.reason, "m"); got.Stalled != tc.want || got.Ready || got.Reason != tc.reason {
			t.Errorf("%s: %+v, want stalled %t", tc.reason, got, tc.want)
		}
		if got := AccountPass(true, tc.reason, "m"); got.Stalled {
			t.Errorf("%s: ready and stalled", tc.reason)
		}
		// A user waits on its account, and stalls with it.
		if got := UserOfUnreadyAccount(tc.reason, "m"); got.Stalled != tc.want || got.Ready || got.Reason != v1alpha1.ReasonAccountNotFound {
			t.Errorf("user of an account at %s: %+v, want stalled %t", tc.reason, got, tc.want)
		}
	}
}
