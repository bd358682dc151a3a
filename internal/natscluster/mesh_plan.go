package natscluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/status"
)

// +kubebuilder:rbac:groups=security.istio.io,resources=peerauthentications,verbs=get;list;watch;create;patch;delete

// meshPass is one pass's mesh decision, carried out around the apply.
type meshPass struct {
	live meshLive
	step plan.MeshStep
}

// planMesh observes the mesh and asks plan.Mesh for this pass's stage.
func (r *Reconciler) planMesh(ctx context.Context, c *v1alpha1.NatsCluster) (*meshPass, error) {
	live, err := r.observeMesh(ctx, c)
	if err != nil {
		return nil, err
	}
	step := plan.Mesh(live.obs)
	r.meshTrouble.record(c.UID, step.Unhealthy != "", time.Now())
	return &meshPass{live: live, step: step}, nil
}

// stage is what render gives the objects.
func (m *meshPass) stage() *render.MeshStage {
	return &render.MeshStage{Sidecars: m.step.Sidecars, Policy: string(m.step.Policy),
		RolledBackGeneration: m.step.RolledBackGeneration, RolledBackFor: string(m.step.RolledBackFor)}
}

// finishMesh runs once the objects are applied: it removes a policy the
// plan no longer wants and tells the story in events.
func (r *Reconciler) finishMesh(ctx context.Context, c *v1alpha1.NatsCluster, m *meshPass) error {
	o, step := m.live.obs, m.step
	if step.Policy == plan.NoPolicy && m.live.policy != nil {
		pa := m.live.policy
		uid := pa.UID
		if err := r.Delete(ctx, pa, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("removing PeerAuthentication %s: %w", pa.Name, err)
		}
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "MeshPolicyRemoved", "Prune",
			"removed PeerAuthentication %s: no server has a sidecar left", pa.Name)
	}
	acted := step.Policy != o.Policy && step.Policy != plan.NoPolicy
	switch {
	case !acted:
	case step.Reason == v1alpha1.ReasonMeshRolledBack:
		r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, v1alpha1.ReasonMeshRolledBack, "Loosen", "%s", step.Message)
	case step.Policy == plan.Strict:
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "MeshStrict", "Tighten",
			"PeerAuthentication %s set to STRICT: %s", c.PeerAuthenticationName(), step.Message)
	case o.Policy == plan.NoPolicy:
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "MeshPermissive", "Create",
			"PeerAuthentication %s created in PERMISSIVE mode, before any server gets or loses its sidecar", c.PeerAuthenticationName())
	default:
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "MeshPermissive", "Loosen",
			"PeerAuthentication %s set to PERMISSIVE: %s", c.PeerAuthenticationName(), step.Message)
	}
	if o.StatefulSetExists && step.Sidecars != o.TemplateSidecars && o.Installed {
		what := "the servers now ask for Istio sidecars; the rolling update gives them one server at a time"
		if !step.Sidecars {
			what = "the servers no longer ask for Istio sidecars; the rolling update takes them away one server at a time"
		}
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "MeshSidecars", "Update", "%s", what)
		acted = true
	}
	if step.Reason == v1alpha1.ReasonIstioNotInstalled {
		// Repeated while it holds; the recorder folds repeats into a series.
		r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, v1alpha1.ReasonIstioNotInstalled, "Reconcile", "%s", step.Message)
		acted = true
	}
	if v := m.verdict(); !acted && v != nil && meshReasonChanged(c.Status.Conditions, v) {
		kind := corev1.EventTypeNormal
		if v.Reason == v1alpha1.ReasonMeshRolledBack || v.Reason == v1alpha1.ReasonMeshStrictUnhealthy {
			// Trouble under STRICT, reported rather than acted on
			// (rollback: Report), is for whoever watches Warnings.
			kind = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(c, nil, kind, v.Reason, "Reconcile", "MeshReady: %s", v.Message)
	}
	return nil
}

// verdict is the MeshReady condition, nil when there is none.
func (m *meshPass) verdict() *status.Verdict {
	if m == nil || m.step.Reason == "" {
		return nil
	}
	return &status.Verdict{Type: v1alpha1.ConditionMeshReady, Status: boolStatus(m.step.Ready), Reason: m.step.Reason, Message: m.step.Message}
}

// retry is when the mesh wants to look again, for what raises no
// Kubernetes event: routes and Raft groups, trouble under STRICT, Istio
// being installed.
func (m *meshPass) retry() time.Duration {
	if m == nil {
		return 0
	}
	switch m.step.Reason {
	case v1alpha1.ReasonWaitingForSidecars, v1alpha1.ReasonMeshDisabling, v1alpha1.ReasonMeshStrictUnhealthy:
		return 2 * time.Second
	case v1alpha1.ReasonMeshStrict:
		if m.step.Unhealthy != "" || !m.step.Ready {
			return 2 * time.Second
		}
		return strictWatch
	case v1alpha1.ReasonMeshRolledBack:
		// A rollback for a sidecar fault clears once the fault is gone,
		// and JetStream settling raises no Kubernetes event.
		if m.step.RolledBackFor == plan.FaultSidecar {
			return strictWatch
		}
	case v1alpha1.ReasonIstioNotInstalled:
		return crdCheckEvery
	}
	return 0
}

// strictWatch is how often a cluster under STRICT is looked at: a route
// that drops raises no Kubernetes event.
const strictWatch = 10 * time.Second

func boolStatus(ok bool) metav1.ConditionStatus {
	if ok {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

// meshReasonChanged reports whether MeshReady's reason changes, for an
// event when no step of this pass told it already.
func meshReasonChanged(prev []metav1.Condition, next *status.Verdict) bool {
	was := meta.FindStatusCondition(prev, v1alpha1.ConditionMeshReady)
	return was == nil || was.Reason != next.Reason
}
