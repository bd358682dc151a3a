package natscluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/servers"
)

// A server hangs when its pod passes its probes but the server does not
// answer the operator: SIGSTOPped, starved, or cut off from the operator's
// network. The kubelet's readiness probe takes its failure threshold
// times its period to notice, if it ever does (a partition between the
// operator and the server leaves the kubelet's probes passing). Until the
// server answers again no server is replaced or removed, and the status
// names it.

// DefaultAnswerBound is how long a ready server has to answer a request
// on its monitor port, unless Reconciler.AnswerBound says
// otherwise: far above what an idle server takes (milliseconds), even on
// a loaded machine, and short enough that a pass that meets a hang still
// reports it within seconds.
const DefaultAnswerBound = 3 * time.Second

// answerBound is the reconciler's bound on a server's answer.
func (r *Reconciler) answerBound() time.Duration {
	if r.AnswerBound > 0 {
		return r.AnswerBound
	}
	return DefaultAnswerBound
}

// idleRecheck is how often a cluster that is otherwise idle is looked at
// again, so that a hang or a full store is reported without waiting for an
// event (neither raises one).
const idleRecheck = 30 * time.Second

// hungServers asks every ready, running server's /healthz at once and
// returns, sorted, the servers whose request got no answer within
// r.answerBound(). An answer of any kind counts, an error status too; so does
// a refused connection (nothing listens: the server is down, which its
// pod's status will show), since only a silent server is a hang. The
// servers already found silent in this pass (known) are not asked again.
func (r *Reconciler) hungServers(ctx context.Context, pods []corev1.Pod, a servers.Access, known []string) []string {
	bound := r.answerBound()
	plain := natsmon.NewClient(bound, r.Versions.HTTP.Transport)
	var (
		mu   sync.Mutex
		hung []string
		wg   sync.WaitGroup
	)
	for i := range pods {
		pod := &pods[i]
		if pod.Status.PodIP == "" || !pod.DeletionTimestamp.IsZero() || !servers.PodReady(pod) {
			continue
		}
		if slices.Contains(known, pod.Name) {
			hung = append(hung, pod.Name)
			continue
		}
		url, hc := a.MonitorURL(plain, pod, "/healthz")
		wg.Add(1)
		go func() {
			defer wg.Done()
			if silent(ctx, hc, url, bound) {
				mu.Lock()
				hung = append(hung, pod.Name)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Strings(hung)
	return hung
}

// silent says whether a GET of url timed out. A pass whose own context
// ended meanwhile learnt nothing about the server.
func silent(ctx context.Context, hc *http.Client, url string, bound time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	req, err := natsmon.NewRequest(ctx, url)
	if err != nil {
		return false
	}
	resp, err := hc.Do(req)
	if err == nil {
		_ = resp.Body.Close()
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() && ctx.Err() != context.Canceled
}

// hungReason is what a rollout and the status say of a hung server.
func hungReason(bound time.Duration) string {
	return fmt.Sprintf("does not answer its monitor port within %s (stopped, or cut off from the operator)", bound)
}

// hungMessage names the hung servers for the status.
func hungMessage(hung []string, bound time.Duration) string {
	switch len(hung) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("server %s %s", hung[0], hungReason(bound))
	}
	return fmt.Sprintf("servers %s do not answer their monitor port within %s (stopped, or cut off from the operator)", strings.Join(hung, ", "), bound)
}
