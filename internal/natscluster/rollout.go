package natscluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/servers"
	"github.com/kubenats/kubenats/internal/status"
)

// settleRetry is how often a waiting rollout looks at the cluster again:
// Raft groups catching up raise no Kubernetes event.
const settleRetry = time.Second

// rollout replaces the servers that run an outdated pod template, as
// plan.Rollout decides: one at a time once every Raft group is settled,
// the meta leader last, at once for a route TLS change, and at once for an
// outdated server that is not ready. It never proceeds on a timeout. The
// blocker it returns says what it waits for, or which server it replaces.
func (r *Reconciler) rollout(ctx context.Context, c *v1alpha1.NatsCluster, sts *appsv1.StatefulSet, pods []corev1.Pod, hung []string) (*status.Blocker, time.Duration, error) {
	if sts == nil || sts.Status.UpdateRevision == "" {
		return nil, 0, nil
	}
	obs := plan.RolloutObservation{Want: int(c.Spec.ReplicaCount()), Routes: render.RouteMode(c)}
	anyOutdated, now := false, time.Now()
	byName := map[string]*corev1.Pod{}
	for i := range pods {
		p := &pods[i]
		byName[p.Name] = p
		s := plan.Server{
			Name:        p.Name,
			Outdated:    p.Labels[appsv1.ControllerRevisionHashLabelKey] != sts.Status.UpdateRevision,
			Ready:       servers.PodReady(p),
			Terminating: !p.DeletionTimestamp.IsZero(),
			Routes:      render.PodRouteMode(c, p.Annotations),
			Trouble:     podTrouble(p, now),
		}
		if slices.Contains(hung, p.Name) {
			s.Hung = hungReason(r.answerBound())
		}
		anyOutdated = anyOutdated || s.Outdated
		obs.Servers = append(obs.Servers, s)
	}
	if !anyOutdated {
		return nil, 0, nil
	}
	// Not while a server hangs: that holds the rollout first
	// (plan.Rollout), and asking the hung server again would only wait
	// out the ping and the answer bound, delaying the status that says so.
	if c.Spec.JetStreamEnabled() && len(pods) > 1 && len(hung) == 0 {
		views := r.jetStreamViews(ctx, c, pods)
		obs.Unsettled, obs.MetaLeader = natsmon.Unsettled(views), natsmon.MetaLeader(views)
		// Every server's own word that it is current.
		r.askOwnViews(ctx, c, pods, obs.Servers, replicatedAccounts(views))
	}
	step := plan.Rollout(obs)
	waiting := func(msg string) (*status.Blocker, time.Duration, error) {
		return &status.Blocker{Reason: v1alpha1.ReasonProgressing, Message: "rolling update: " + msg}, settleRetry, nil
	}
	if step.Action == plan.Wait {
		if step.Waiting == "" {
			return nil, 0, nil
		}
		if step.Halted {
			// A Warning, repeated while it holds (the recorder folds repeats
			// into a series): the user has to fix or revert the change.
			r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, v1alpha1.ReasonRolloutHalted, "Halt", "%s", step.Waiting)
			return &status.Blocker{Reason: v1alpha1.ReasonRolloutHalted, Message: "rolling update " + step.Waiting, Fatal: true}, settleRetry, nil
		}
		return waiting(step.Waiting)
	}
	for _, name := range step.Servers {
		victim := byName[name]
		// The UID precondition makes sure a pod replaced meanwhile is not hit.
		if err := r.Delete(ctx, victim, client.Preconditions{UID: &victim.UID}); client.IgnoreNotFound(err) != nil {
			return nil, 0, err
		}
	}
	what := fmt.Sprintf("replacing server %s", strings.Join(step.Servers, ", "))
	if step.Action == plan.ReplaceAll {
		what = fmt.Sprintf("route TLS change: restarting servers %s at once (servers with and without route TLS cannot route to each other)", strings.Join(step.Servers, ", "))
	}
	r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "RollingUpdate", "Replace", "%s", what)
	return waiting(what)
}

// askOwnViews sets each server's Behind from its own view; without access
// to the servers none can say it is current.
func (r *Reconciler) askOwnViews(ctx context.Context, c *v1alpha1.NatsCluster, pods []corev1.Pod, servers []plan.Server, accounts map[string][]string) {
	behind := map[string]string{}
	if a, err := r.Servers.Access(ctx, c); err == nil {
		behind = r.ownViews(ctx, pods, a, accounts)
	} else {
		for i := range pods {
			behind[pods[i].Name] = "its own view could not be asked"
		}
	}
	for i := range servers {
		servers[i].Behind = behind[servers[i].Name]
	}
}

// jetStreamViews is every server's JetStream view, keyed by server (pod)
// name; a server that did not answer has a nil view, which keeps the
// cluster unsettled. With a system account the views come through it, as
// the servers' own answers to a ping; a cluster without one (auth token or
// none) is read from each server's monitor port instead.
func (r *Reconciler) jetStreamViews(ctx context.Context, c *v1alpha1.NatsCluster, pods []corev1.Pod) map[string]*natsmon.JSInfo {
	views := make(map[string]*natsmon.JSInfo, len(pods))
	for i := range pods {
		views[pods[i].Name] = nil
	}
	a, err := r.Servers.Access(ctx, c)
	if err != nil {
		return views
	}
	if !c.HasSystemUser() {
		for i := range pods {
			url, hc := a.MonitorURL(r.Versions.HTTP, &pods[i], natsmon.JSZQuery)
			if info, err := natsmon.FetchJSZ(ctx, hc, url); err == nil {
				views[pods[i].Name] = info
			}
		}
		return views
	}
	nc, err := a.Connect(pods, jetstream.MaxSystemReply)
	if err != nil {
		return views
	}
	defer nc.Close()
	answers, _ := natsmon.FetchJSZFromSystem(ctx, nc, len(pods), systemPingWait)
	for name, info := range answers {
		if _, ok := views[name]; ok {
			views[name] = info
		}
	}
	return views
}

// systemPingWait is how long the servers have to answer a ping.
const systemPingWait = 2 * time.Second
