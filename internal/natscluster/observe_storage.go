package natscluster

import (
	"context"
	"net/http"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/servers"
)

// observeStores asks every running server for its file store's use, all
// at once: a server that hangs (stopped, cut off) costs one timeout, not
// one per server. A server that is not ready is asked too: one whose
// JetStream turned itself off after a full disk fails its readiness
// probe, and is the one to name. A server that does not answer is left
// out.
func (r *Reconciler) observeStores(ctx context.Context, pods []corev1.Pod, a servers.Access) map[string]natsmon.StoreUse {
	stores := map[string]natsmon.StoreUse{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range pods {
		p := &pods[i]
		if p.Status.PodIP == "" || !p.DeletionTimestamp.IsZero() || p.Status.Phase != corev1.PodRunning {
			continue
		}
		wg.Go(func() {
			url, hc := a.MonitorURL(r.Versions.HTTP, p, natsmon.StoreQuery)
			use, err := natsmon.FetchStoreUse(ctx, hc, url)
			closeIdle(hc, r.Versions.HTTP)
			if err == nil {
				mu.Lock()
				stores[p.Name] = use
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return stores
}

// closeIdle closes the connections of a client made for one request (the
// monitor's TLS), which would otherwise stay open, one set per look.
func closeIdle(hc, shared *http.Client) {
	if hc != shared {
		hc.CloseIdleConnections()
	}
}

// announceStorage records the event storageEvent decides.
func (r *Reconciler) announceStorage(c *v1alpha1.NatsCluster, prev, next v1alpha1.NatsClusterStatus) {
	now := meta.FindStatusCondition(next.Conditions, v1alpha1.ConditionStorageAvailable)
	if kind, ok := storageEvent(meta.FindStatusCondition(prev.Conditions, v1alpha1.ConditionStorageAvailable), now); ok {
		r.Recorder.Eventf(c, nil, kind, now.Reason, "Observe", "%s", now.Message)
	}
}

// storageEvent says which event a change of StorageAvailable from was to
// now deserves: a Warning when it turns False or changes its reason while
// False, a Normal event when it is True again after being False; none for
// the first look, nor for Unknown (the servers are starting).
func storageEvent(was, now *metav1.Condition) (eventType string, ok bool) {
	switch {
	case now == nil || (was != nil && was.Status == now.Status && was.Reason == now.Reason):
		return "", false
	case now.Status == metav1.ConditionFalse:
		return corev1.EventTypeWarning, true
	case now.Status == metav1.ConditionTrue && was != nil && was.Status == metav1.ConditionFalse:
		return corev1.EventTypeNormal, true
	}
	return "", false
}
