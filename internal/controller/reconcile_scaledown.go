package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/status"
)

// JetStream API subjects the scale-down uses (system account only).
const (
	subjectEvacuate   = "$JS.API.SERVER.EVACUATE"
	subjectStepDown   = "$JS.API.META.LEADER.STEPDOWN"
	subjectRemovePeer = "$JS.API.SERVER.REMOVE"
)

// scaleDown decides how many servers the StatefulSet may have in this pass
// when the spec asks for fewer than run. Servers go one at a time, highest
// ordinal first, and only once they hold nothing: their stream and consumer
// replicas moved away, their meta leadership handed over. Then their
// JetStream peers are removed; a removed server shows as offline only
// seconds after it stops, so the passes go on (reason ScalingDown) until
// none is left. What cannot be done safely is refused, never half done.
func (r *NatsClusterReconciler) scaleDown(ctx context.Context, c *v1alpha1.NatsCluster, live int32, pods []corev1.Pod) (int32, *status.Blocker, error) {
	want := c.Spec.ReplicaCount()
	shrinking := want < live
	underWay := shrinking || c.Status.Replicas > want || readyReason(c) == reasonScalingDown
	if !underWay || !c.Spec.JetStreamEnabled() {
		return want, nil, nil
	}
	refuse := func(msg string) (int32, *status.Blocker, error) {
		return live, &status.Blocker{Reason: reasonScaleDownRefused, Message: msg}, nil
	}
	waiting := func(msg string) (int32, *status.Blocker, error) {
		return live, &status.Blocker{Reason: reasonScalingDown, Message: "scale-down: " + msg}, nil
	}
	if !render.HasSystemUser(c) {
		if !shrinking {
			return want, nil, nil
		}
		return refuse(fmt.Sprintf("scaling a JetStream cluster in auth mode %s from %d to %d is refused: moving replicas off a server and removing its JetStream peer need the system account, which this mode cannot have",
			c.Spec.Auth.Mode, live, want))
	}
	cred, err := r.access(ctx, c)
	if err != nil {
		return waiting("reading the operator's access to the servers: " + err.Error())
	}
	if hung := r.hungServers(ctx, pods, cred); shrinking && len(hung) > 0 {
		return waiting(hungMessage(hung) + "; no server is removed while one hangs")
	}
	// One look at the servers serves the whole pass.
	views := r.jetStreamViews(ctx, c, pods)
	pending, err := r.removeGonePeers(ctx, c, pods, cred, views)
	if !shrinking {
		// The servers are gone; only their peers may be left.
		switch {
		case err != nil:
			return want, &status.Blocker{Reason: reasonScalingDown, Message: "scale-down: removing JetStream peers: " + err.Error()}, nil
		case len(pending) > 0:
			return want, &status.Blocker{Reason: reasonScalingDown, Message: "scale-down: removing JetStream peers " + strings.Join(pending, ", ") + " from the meta group"}, nil
		}
		return want, nil, nil
	}
	if stream, n := natsmon.WidestStream(views); n > int(want) {
		return refuse(fmt.Sprintf("stream %s has %d replicas: %d servers cannot hold them; lower its replicas first", stream, n, want))
	}
	if err != nil {
		return waiting("removing JetStream peers: " + err.Error())
	}
	if msg := natsmon.Unsettled(views); msg != "" {
		return waiting("waiting for JetStream to settle: " + msg)
	}
	victim := render.PodName(c, int(live-1))
	if natsmon.Hosts(views[victim]) {
		if err := systemRequest(ctx, pods, cred, subjectEvacuate, map[string]string{"peer": victim}); err != nil {
			return waiting("moving replicas off " + victim + ": " + err.Error())
		}
		return waiting("moving stream and consumer replicas off " + victim)
	}
	if natsmon.MetaLeader(views) == victim {
		if err := systemRequest(ctx, pods, cred, subjectStepDown, struct{}{}); err != nil {
			return waiting("asking " + victim + " to hand over meta leadership: " + err.Error())
		}
		return waiting("waiting for " + victim + " to hand over meta leadership")
	}
	return live - 1, &status.Blocker{Reason: reasonScalingDown, Message: "scale-down: removing server " + victim}, nil
}

// removeGonePeers removes from the JetStream meta group the servers that
// scale-down took away, so that no stale offline peer stays behind to count
// against the quorum. A peer of this cluster with an ordinal at or above the
// replica count is removed once its pod is gone (not merely terminating:
// lame duck takes a while) and the meta leader sees it offline. It returns
// such peers still in the group, removed in this pass or not yet.
func (r *NatsClusterReconciler) removeGonePeers(ctx context.Context, c *v1alpha1.NatsCluster, pods []corev1.Pod, cred serverAccess, views map[string]*server.JSInfo) ([]string, error) {
	if len(pods) < 2 {
		return nil, nil
	}
	beyond := func(peer string) bool {
		ordinal, ok := render.PodOrdinal(c, peer)
		return ok && ordinal >= int(c.Spec.ReplicaCount())
	}
	hasPod := func(peer string) bool {
		return slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Name == peer })
	}
	members, ok := natsmon.MetaMembers(views)
	if !ok {
		return nil, errors.New("the JetStream meta group has no leader to ask")
	}
	var pending []string
	for _, m := range members {
		if !beyond(m.Name) {
			continue
		}
		pending = append(pending, m.Name)
		if !m.Offline || hasPod(m.Name) {
			continue // still going: a later pass removes it
		}
		if err := systemRequest(ctx, pods, cred, subjectRemovePeer, map[string]string{"peer": m.Name}); err != nil {
			return pending, err
		}
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "PeerRemoved", "ScaleDown", "removed JetStream peer %s", m.Name)
	}
	return pending, nil
}

// readyReason is the reason of the Ready condition the last pass wrote.
func readyReason(c *v1alpha1.NatsCluster) string {
	if ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady); ready != nil {
		return ready.Reason
	}
	return ""
}
