package natscluster

import (
	"context"
	"net/http"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/servers"
)

// ownViews asks every ready, running server at once whether it is current
// in its own Raft view (natsmon.HealthQuery), then whether it has applied
// what it committed in the meta group and in the groups of accounts[its
// name] (natsmon.RaftzQuery), and returns, for each server that did not
// say so, why: what it names as not current, or that its answer could not
// be had. The leader's view of its followers (natsmon.Unsettled) and the
// follower's /healthz count what a follower stored; /raftz is what it
// applied. A server that is not ready or is going is left out: the
// rollout waits for it, or replaces it, on its pod's word.
func (r *Reconciler) ownViews(ctx context.Context, pods []corev1.Pod, a servers.Access, accounts map[string][]string) map[string]string {
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
			if err == nil && why == "" {
				why, err = r.applyBacklog(ctx, plain, a, pod, accounts[pod.Name])
			}
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

// maxRaftzAccounts bounds the accounts whose groups a pass asks one server
// about, one request each: those past it (in name order) are not asked.
const maxRaftzAccounts = 64

// applyBacklog asks pod's server, account by account (the system account
// first, for the meta group), whether it has applied what it committed:
// "" when it has, or the first group that has not.
func (r *Reconciler) applyBacklog(ctx context.Context, plain *http.Client, a servers.Access, pod *corev1.Pod, accounts []string) (string, error) {
	for _, account := range append([]string{""}, accounts[:min(len(accounts), maxRaftzAccounts)]...) {
		url, hc := a.MonitorURL(plain, pod, natsmon.RaftzQuery(account))
		why, err := natsmon.FetchApplyBacklog(ctx, hc, url)
		if err != nil || why != "" {
			return why, err
		}
	}
	return "", nil
}

// replicatedAccounts lists, for each server, the accounts of the
// replicated streams its JetStream view holds: those with Raft groups on
// it besides the meta group's.
func replicatedAccounts(views map[string]*natsmon.JSInfo) map[string][]string {
	out := map[string][]string{}
	for server, v := range views {
		if v == nil {
			continue
		}
		for _, acc := range v.Accounts {
			for _, st := range acc.Streams {
				if st.Replicas > 1 {
					out[server] = append(out[server], acc.Name)
					break
				}
			}
		}
		sort.Strings(out[server])
	}
	return out
}
