package status

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsmon"
)

const mib = 1 << 20

func TestStorage(t *testing.T) {
	room := natsmon.StoreUse{Used: 10 * mib, Limit: 128 * mib}
	full := natsmon.StoreUse{Used: 128*mib + 300, Limit: 128 * mib}
	for _, tc := range []struct {
		name       string
		stores     map[string]natsmon.StoreUse
		status     metav1.ConditionStatus
		reason     string
		mentions   []string
		mentionsNo []string
	}{
		{"nobody answered yet", nil, metav1.ConditionUnknown, v1alpha1.ReasonStorageUnknown, nil, nil},
		{"every store has room", map[string]natsmon.StoreUse{"nats-0": room, "nats-1": room, "nats-2": room},
			metav1.ConditionTrue, v1alpha1.ReasonStorageAvailable, []string{"3 servers"}, nil},
		{"exactly at the limit is full", map[string]natsmon.StoreUse{"nats-0": {Used: 128 * mib, Limit: 128 * mib}},
			metav1.ConditionFalse, v1alpha1.ReasonStoreFull, []string{"nats-0 (limit 128Mi)"}, nil},
		{"within a message of the limit is full", map[string]natsmon.StoreUse{"nats-0": {Used: 128*mib - 60000, Limit: 128 * mib}},
			metav1.ConditionFalse, v1alpha1.ReasonStoreFull, []string{"nats-0 (limit 128Mi)"}, nil},
		{"more than a message below the limit has room", map[string]natsmon.StoreUse{"nats-0": {Used: 127*mib - 1, Limit: 128 * mib}},
			metav1.ConditionTrue, v1alpha1.ReasonStorageAvailable, nil, nil},
		{"two full stores are named, in order, the one with room not", map[string]natsmon.StoreUse{"nats-2": full, "nats-0": full, "nats-1": room},
			metav1.ConditionFalse, v1alpha1.ReasonStoreFull, []string{"nats-0 (limit 128Mi), nats-2 (limit 128Mi)", "insufficient resources", "fileStore.size"}, []string{"nats-1"}},
		{"no limit is never full", map[string]natsmon.StoreUse{"nats-0": {Used: 1 << 40}},
			metav1.ConditionTrue, v1alpha1.ReasonStorageAvailable, nil, nil},
		{"JetStream turned off by a full disk comes first", map[string]natsmon.StoreUse{"nats-0": full, "nats-1": {JetStreamDisabled: true}},
			metav1.ConditionFalse, v1alpha1.ReasonJetStreamDisabled, []string{"nats-1", "disk full"}, []string{"nats-0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := storage(tc.stores)
			if v.Type != v1alpha1.ConditionStorageAvailable || v.Status != tc.status || v.Reason != tc.reason {
				t.Fatalf("storage = %s %s/%s (%q), want %s/%s", v.Type, v.Status, v.Reason, v.Message, tc.status, tc.reason)
			}
			for _, m := range tc.mentions {
				if !strings.Contains(v.Message, m) {
					t.Errorf("message %q does not mention %q", v.Message, m)
				}
			}
			for _, m := range tc.mentionsNo {
				if strings.Contains(v.Message, m) {
					t.Errorf("message %q mentions %q", v.Message, m)
				}
			}
		})
	}
}

// TestStorageMessageIgnoresTheBytesInUse: a full store that fills further
// (retention dropping and adding messages) keeps the same condition, so
// the status is not rewritten at every look.
func TestStorageMessageIgnoresTheBytesInUse(t *testing.T) {
	a := storage(map[string]natsmon.StoreUse{"nats-0": {Used: 128 * mib, Limit: 128 * mib}, "nats-1": {Used: mib, Limit: 128 * mib}})
	b := storage(map[string]natsmon.StoreUse{"nats-0": {Used: 129 * mib, Limit: 128 * mib}, "nats-1": {Used: 7 * mib, Limit: 128 * mib}})
	if a != b {
		t.Fatalf("verdicts differ with the bytes in use:\n%+v\n%+v", a, b)
	}
}

// TestNatsClusterReportsStorageWithJetStreamOnly: the condition is there
// for a cluster with JetStream and absent without, and a full store leaves
// Ready as it was.
func TestNatsClusterReportsStorageWithJetStreamOnly(t *testing.T) {
	fullStores := map[string]natsmon.StoreUse{"nats-0": {Used: 128 * mib, Limit: 128 * mib}}
	st := NatsCluster(ClusterObservation{Cluster: natsCluster(3), StatefulSet: settled(3, 3), Stores: fullStores, Now: now})
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionStorageAvailable); c == nil || c.Reason != v1alpha1.ReasonStoreFull {
		t.Fatalf("StorageAvailable = %+v, want StoreFull", c)
	}
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("Ready = %+v with a full store, want True: the servers serve", c)
	}
	off := natsCluster(3, func(c *v1alpha1.NatsCluster) { c.Spec.JetStream.Enabled = new(false) })
	st = NatsCluster(ClusterObservation{Cluster: off, StatefulSet: settled(3, 3), Stores: fullStores, Now: now})
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionStorageAvailable); c != nil {
		t.Fatalf("StorageAvailable = %+v without JetStream, want none", c)
	}
}
