package natscluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/servers"
	"github.com/kubenats/kubenats/internal/status"
)

// JetStream API subjects the scale-down uses (system account only).
const (
	subjectEvacuate   = "$JS.API.SERVER.EVACUATE"
	subjectStepDown   = "$JS.API.META.LEADER.STEPDOWN"
	subjectRemovePeer = "$JS.API.SERVER.REMOVE"
)

// Reasons of the events that tell a scale-down's story, one per step
// carried out.
const (
	eventEvacuating    = "Evacuating"
	eventMetaStepDown  = "MetaLeaderStepDown"
	eventServerRemoved = "ServerRemoved"
	eventPeerRemoved   = "PeerRemoved"
)

// scaleDown decides how many servers the StatefulSet may have in this pass
// when the spec asks for fewer than run, or while the peers of servers it
// removed are still in the meta group. It observes, asks plan.ScaleDown for
// the one next step, and carries it out: an evacuation, a meta leader
// step-down, a peer removal, or one server fewer. The blocker says what the
// scale-down waits for or did.
func (r *Reconciler) scaleDown(ctx context.Context, c *v1alpha1.NatsCluster, live int32, pods []corev1.Pod) (int32, *status.Blocker, error) {
	want := c.Spec.ReplicaCount()
	shrinking := want < live
	// A scale-out is under way from the pass that sees the spec ask for
	// more servers than the StatefulSet has until every new server has
	// joined the meta group; the reason carries it over passes. (A new
	// cluster's StatefulSet is made at its size: it forms, it does not grow.)
	growing := !shrinking && (want > live || readyReason(c) == reasonScalingUp)
	underWay := shrinking || growing || c.Status.Replicas > want || readyReason(c) == reasonScalingDown
	if !underWay || !c.Spec.JetStreamEnabled() {
		return want, nil, nil
	}
	allowed := want
	if shrinking {
		allowed = live
	}
	reason, what := reasonScalingDown, "scale-down: "
	if growing {
		reason, what = reasonScalingUp, "scale-out: "
	}
	waiting := func(msg string) (int32, *status.Blocker, error) {
		return allowed, &status.Blocker{Reason: reason, Message: what + msg}, nil
	}
	obs := plan.ScaleDownObservation{Live: int(live), Want: int(want), SystemAccount: c.HasSystemUser(), AuthMode: string(c.Spec.Auth.Mode)}
	var cred servers.Access
	if obs.SystemAccount {
		var err error
		if cred, err = r.Servers.Access(ctx, c); err != nil {
			return waiting("reading the operator's access to the servers: " + err.Error())
		}
		if shrinking {
			obs.Hung = hungMessage(r.hungServers(ctx, pods, cred, nil), r.answerBound())
		}
		observeScaleDown(&obs, c, pods, r.jetStreamViews(ctx, c, pods))
	}
	step := plan.ScaleDown(obs)
	switch step.Action {
	case plan.Wait:
		switch {
		case step.Refused:
			// Fatal: only the user lifts it (fewer stream replicas, or the
			// replicas asked back), though the pass keeps looking.
			return allowed, &status.Blocker{Reason: reasonScaleDownRefused, Message: step.Waiting, Fatal: true}, nil
		case step.Waiting == "":
			return allowed, nil, nil
		}
		return waiting(step.Waiting)
	case plan.RemoveServer:
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, eventServerRemoved, "ScaleDown",
			"removing server %s: it holds no replica and does not lead the meta group", step.Servers[0])
		return live - 1, &status.Blocker{Reason: reasonScalingDown, Message: "scale-down: " + step.Waiting}, nil
	}
	if err := r.carryOut(ctx, c, pods, cred, step); err != nil {
		return waiting(step.Waiting + ": " + err.Error())
	}
	return waiting(step.Waiting)
}

// carryOut sends the system account request of a scale-down step and
// records it as an event.
func (r *Reconciler) carryOut(ctx context.Context, c *v1alpha1.NatsCluster, pods []corev1.Pod, cred servers.Access, step plan.Step) error {
	server := step.Servers[0]
	switch step.Action {
	case plan.Evacuate:
		if err := systemRequest(ctx, pods, cred, subjectEvacuate, map[string]string{"peer": server}); err != nil {
			return err
		}
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, eventEvacuating, "ScaleDown",
			"moving every stream and consumer replica off %s before it is removed", server)
		// Done is when the servers show it: the next pass must not find
		// the replicas unmoved and ask again.
		return r.awaitEvacuation(ctx, c, pods, server)
	case plan.StepDown:
		err := systemRequest(ctx, pods, cred, subjectStepDown, map[string]any{"placement": map[string]string{"preferred": step.To}})
		if err != nil {
			// The preferred server may not be able to lead right now; any
			// other will do.
			err = systemRequest(ctx, pods, cred, subjectStepDown, struct{}{})
		}
		if err != nil {
			return err
		}
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, eventMetaStepDown, "ScaleDown",
			"asked %s to hand JetStream meta leadership over (to %s preferably) before it is removed", server, step.To)
		return nil
	case plan.RemovePeer:
		err := systemRequest(ctx, pods, cred, subjectRemovePeer, map[string]string{"peer": server})
		if err != nil && strings.Contains(err.Error(), "error code 10044") {
			return nil // not a member (any more): removed meanwhile
		}
		if err != nil {
			return err
		}
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, eventPeerRemoved, "ScaleDown", "removed JetStream peer %s", server)
		return nil
	}
	return fmt.Errorf("no way to carry out step %+v", step)
}

// evacuationSeen bounds the wait for the servers to show an evacuation.
const evacuationSeen = 10 * time.Second

// awaitEvacuation waits until every group on server is moving or gone
// from it, as the servers report.
func (r *Reconciler) awaitEvacuation(ctx context.Context, c *v1alpha1.NatsCluster, pods []corev1.Pod, server string) error {
	deadline := time.Now().Add(evacuationSeen)
	for {
		obs := plan.ScaleDownObservation{}
		observeScaleDown(&obs, c, pods, r.jetStreamViews(ctx, c, pods))
		unmoved := ""
		for _, g := range obs.Groups {
			if !g.Moving && slices.Contains(g.Peers, server) {
				unmoved = g.Name
				break
			}
		}
		if unmoved == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the servers do not show %s moving off %s yet", unmoved, server)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// readyReason is the reason of the Ready condition the last pass wrote.
func readyReason(c *v1alpha1.NatsCluster) string {
	if ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady); ready != nil {
		return ready.Reason
	}
	return ""
}
