package natscluster

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/servers"
)

// ownViews asks every ready, running server at once whether it is current
// in its own Raft view (natsmon.HealthQuery) and returns, for each server
// that did not say so, why: what it names as not current, or that its
// answer could not be had. The leader's view of its followers
// (natsmon.Unsettled) counts what a follower stored; this is what the
// follower applied. A server that is not ready or is going is left out:
// the rollout waits for it, or replaces it, on its pod's word.
func (r *Reconciler) ownViews(ctx context.Context, pods []corev1.Pod, a servers.Access) map[string]string {
	plain := natsmon.NewClient(r.answerBound(), r.Versions.HTTP.Transport)
	var (
		mu     sync.Mutex
		behind = map[string]string{}
		wg     sync.WaitGroup
	)
	for i := range pods {
		pod := &pods[i]
		if pod.Status.PodIP == "" || !pod.DeletionTimestamp.IsZero() || !servers.PodReady(pod) {
			continue
		}
		url, hc := a.MonitorURL(plain, pod, natsmon.HealthQuery)
		wg.Add(1)
		go func() {
			defer wg.Done()
			why, err := natsmon.FetchOwnView(ctx, hc, url)
			if err != nil {
				why = "it did not say (" + natsmon.Shown(err.Error()) + ")"
			}
			if why != "" {
				mu.Lock()
				behind[pod.Name] = why
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return behind
}
