package natscluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/plan"
)

// The requests a user makes by annotation (v1alpha1.AnnotationStepDown,
// AnnotationEvacuate; kubectl kubenats stepdown and evacuate): decided by
// plan.Requests on a settled cluster, carried out here as the operator's
// system user, each new value once (plan.RequestStep.Outcome says when a
// failed one is tried again). What was carried out goes into
// status.carried with the status the pass writes; a pass whose status
// write lost a race does it again, which for these requests is harmless.

// carryOutRequests carries out the pending requests and returns what is
// carried now, and whether one failed and should be tried again.
func (r *Reconciler) carryOutRequests(ctx context.Context, c *v1alpha1.NatsCluster, pods []corev1.Pod) (*v1alpha1.CarriedRequests, bool) {
	carried := &v1alpha1.CarriedRequests{}
	if c.Status.Carried != nil {
		*carried = *c.Status.Carried
	}
	stepDown, evacuate := c.Annotations[v1alpha1.AnnotationStepDown], c.Annotations[v1alpha1.AnnotationEvacuate]
	reqs := []plan.UserRequest{
		{Kind: plan.RequestStepDown, Value: stepDown, Carried: carried.StepDown, Target: v1alpha1.RequestTarget(stepDown)},
		{Kind: plan.RequestEvacuate, Value: evacuate, Carried: carried.Evacuate, Target: v1alpha1.RequestTarget(evacuate)},
	}
	names := make([]string, 0, len(pods))
	for i := range pods {
		names = append(names, pods[i].Name)
	}
	steps := plan.Requests(reqs, names)
	if len(steps) == 0 {
		return c.Status.Carried, false
	}
	retry := false
	for _, step := range steps {
		req := step.Request
		taken, err := r.carryOutRequest(ctx, c, pods, step)
		switch step.Outcome(taken, err) {
		case plan.RequestRetry:
			r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, "RequestFailed", string(req.Kind), "%s %q: %v", req.Kind, req.Value, err)
			retry = true
			continue
		case plan.RequestFailedOnce:
			r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, "RequestFailed", string(req.Kind), "%s %q: %v", req.Kind, req.Value, err)
		}
		if step.Refused != "" {
			r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, "RequestRefused", string(req.Kind), "%s %q: %s", req.Kind, req.Value, step.Refused)
		}
		switch req.Kind {
		case plan.RequestStepDown:
			carried.StepDown = req.Value
		case plan.RequestEvacuate:
			carried.Evacuate = req.Value
		}
	}
	return carried, retry
}

// carryOutRequest sends one request's system account request, and says
// whether the servers took it.
func (r *Reconciler) carryOutRequest(ctx context.Context, c *v1alpha1.NatsCluster, pods []corev1.Pod, step plan.RequestStep) (bool, error) {
	if step.Refused != "" {
		return false, nil
	}
	if !c.Spec.JetStreamEnabled() || !c.HasSystemUser() {
		return false, fmt.Errorf("needs JetStream and the operator's system account user")
	}
	a, err := r.Servers.Access(ctx, c)
	if err != nil {
		return false, err
	}
	target := step.Request.Target
	switch step.Request.Kind {
	case plan.RequestStepDown:
		body := any(struct{}{})
		if target != "" {
			body = map[string]any{"placement": map[string]string{"preferred": target}}
		}
		if err := systemRequest(ctx, pods, a, subjectStepDown, body); err != nil {
			return false, err
		}
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, eventMetaStepDown, "StepDown",
			"asked the JetStream meta leader to hand leadership over%s, as %s asked", preferring(target), v1alpha1.AnnotationStepDown)
	case plan.RequestEvacuate:
		if err := systemRequest(ctx, pods, a, subjectEvacuate, map[string]string{"peer": target}); err != nil {
			return false, err
		}
		if err := r.awaitEvacuation(ctx, c, pods, target); err != nil {
			return true, err
		}
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, eventEvacuating, "Evacuate",
			"moving every stream and consumer replica off %s, as %s asked", target, v1alpha1.AnnotationEvacuate)
	}
	return true, nil
}

func preferring(server string) string {
	if server == "" {
		return ""
	}
	return " (to " + server + " preferably)"
}
