package controller

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/status"
)

// settleRetry is how often a waiting rollout looks at the cluster again:
// Raft groups catching up raise no Kubernetes event.
const settleRetry = time.Second

// rollout replaces the servers that run an outdated pod template, one at a
// time: only when every server is up and ready and, with JetStream, every
// Raft group has a leader and current replicas; the meta leader last. It
// never proceeds on a timeout. The blocker it returns says what it waits
// for, or which server it replaces.
func (r *NatsClusterReconciler) rollout(ctx context.Context, c *v1alpha1.NatsCluster, sts *appsv1.StatefulSet, pods []corev1.Pod) (*status.Blocker, time.Duration, error) {
	if sts == nil || sts.Status.UpdateRevision == "" {
		return nil, 0, nil
	}
	outdated := outdatedPods(pods, sts.Status.UpdateRevision)
	if len(outdated) == 0 {
		return nil, 0, nil
	}
	waiting := func(msg string) (*status.Blocker, time.Duration, error) {
		return &status.Blocker{Reason: v1alpha1.ReasonProgressing, Message: "rolling update: " + msg}, settleRetry, nil
	}
	if len(pods) < int(c.Spec.ReplicaCount()) {
		return waiting(fmt.Sprintf("waiting for %d of %d servers to exist", c.Spec.ReplicaCount()-int32(len(pods)), c.Spec.ReplicaCount()))
	}
	for i := range pods {
		if !pods[i].DeletionTimestamp.IsZero() || !podReady(&pods[i]) {
			return waiting("waiting for server " + pods[i].Name + " to be ready")
		}
	}
	leader := ""
	if c.Spec.JetStreamEnabled() && len(pods) > 1 {
		views := r.jetStreamViews(ctx, c, pods)
		if msg := natsmon.Unsettled(views); msg != "" {
			return waiting("waiting for JetStream to settle: " + msg)
		}
		leader = natsmon.MetaLeader(views)
	}
	victim := nextToReplace(outdated, leader)
	// The UID precondition makes sure a pod replaced meanwhile is not hit.
	if err := r.Delete(ctx, victim, client.Preconditions{UID: &victim.UID}); client.IgnoreNotFound(err) != nil {
		return nil, 0, err
	}
	r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "RollingUpdate", "Replace",
		"replacing server %s (%d of %d servers outdated)", victim.Name, len(outdated), len(pods))
	return waiting(fmt.Sprintf("replacing server %s, %d of %d servers outdated", victim.Name, len(outdated), len(pods)))
}

// outdatedPods are the pods not on the StatefulSet's update revision.
func outdatedPods(pods []corev1.Pod, revision string) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range pods {
		if pods[i].Labels[appsv1.ControllerRevisionHashLabelKey] != revision {
			out = append(out, &pods[i])
		}
	}
	return out
}

// nextToReplace picks the highest ordinal that does not lead the meta
// group; the leader goes last, so leadership moves once, not per server.
func nextToReplace(outdated []*corev1.Pod, leader string) *corev1.Pod {
	sort.Slice(outdated, func(i, j int) bool { // by ordinal: nats-10 after nats-9
		a, b := outdated[i].Name, outdated[j].Name
		return len(a) > len(b) || (len(a) == len(b) && a > b)
	})
	for _, p := range outdated {
		if p.Name != leader {
			return p
		}
	}
	return outdated[0]
}

// jetStreamViews is every server's JetStream view, keyed by server (pod)
// name; a server that did not answer has a nil view, which keeps the
// cluster unsettled. With a system account the views come through it, as
// the servers' own answers to a ping; a cluster without one (auth token or
// none) is read from each server's monitor port instead.
func (r *NatsClusterReconciler) jetStreamViews(ctx context.Context, c *v1alpha1.NatsCluster, pods []corev1.Pod) map[string]*server.JSInfo {
	views := make(map[string]*server.JSInfo, len(pods))
	for i := range pods {
		views[pods[i].Name] = nil
	}
	if !render.HasSystemUser(c) {
		for i := range pods {
			if info, err := natsmon.FetchJSZ(ctx, r.Versions.HTTP, pods[i].Status.PodIP, render.MonitorPort); err == nil {
				views[pods[i].Name] = info
			}
		}
		return views
	}
	password, err := r.systemPassword(ctx, c)
	if err != nil {
		return views
	}
	nc, err := connectSystem(pods, password)
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
