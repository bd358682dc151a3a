package status

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsmon"
)

// storage is the StorageAvailable verdict from what each server reported
// of its file store, keyed by server; a server that did not answer is
// absent. A full store is not a reason for Ready to be False: the servers
// still run and serve reads, and the JetStream resources, which wait for a
// ready cluster, must still be reconciled (a purge or a lower limit is how
// room comes back).
//
// The messages name servers and configured limits only, never the bytes in
// use, so that the status is not rewritten at every look while data flows.
func storage(stores map[string]natsmon.StoreUse) Verdict {
	v := Verdict{Type: v1alpha1.ConditionStorageAvailable, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonStorageAvailable}
	if len(stores) == 0 {
		v.Status, v.Reason, v.Message = metav1.ConditionUnknown, v1alpha1.ReasonStorageUnknown, "no server has reported its file store yet"
		return v
	}
	var full, disabled []string
	for _, name := range sortedServers(stores) {
		switch u := stores[name]; {
		case u.JetStreamDisabled:
			disabled = append(disabled, name)
		case u.Full():
			full = append(full, fmt.Sprintf("%s (limit %s)", name, resource.NewQuantity(u.Limit, resource.BinarySI).String()))
		}
	}
	switch {
	case len(disabled) > 0:
		v.Status, v.Reason = metav1.ConditionFalse, v1alpha1.ReasonJetStreamDisabled
		v.Message = fmt.Sprintf("JetStream is disabled on %s: nats-server turns it off when a write finds the disk full, "+
			"and its liveness probe then fails; free space on the claim or grow spec.jetstream.fileStore.size", strings.Join(disabled, ", "))
	case len(full) > 0:
		v.Status, v.Reason = metav1.ConditionFalse, v1alpha1.ReasonStoreFull
		v.Message = fmt.Sprintf("the file store is full on %s: publishes to its streams are refused (\"insufficient resources\"), "+
			"and a clustered stream whose replicas are all on full servers has no leader (nats-server's Raft waits for room); "+
			"make room by purging a stream that still has a leader, deleting a stream, or growing spec.jetstream.fileStore.size",
			strings.Join(full, ", "))
	default:
		v.Message = fmt.Sprintf("the file stores of %d servers have room", len(stores))
	}
	return v
}

func sortedServers(stores map[string]natsmon.StoreUse) []string {
	names := make([]string, 0, len(stores))
	for n := range stores {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
