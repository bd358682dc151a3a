package natscluster

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/servers"
	"github.com/kubenats/kubenats/internal/status"
)

func isStatefulSet(o client.Object) bool {
	_, ok := o.(*appsv1.StatefulSet)
	return ok
}

func findStatefulSet(objs []client.Object) *appsv1.StatefulSet {
	for _, o := range objs {
		if sts, ok := o.(*appsv1.StatefulSet); ok {
			return sts
		}
	}
	return nil
}

// guardStatefulSet adjusts the desired StatefulSet for what cannot be
// applied as it is, in place:
//   - A change of an immutable field (the claim template when the store
//     grows) deletes the live StatefulSet with orphan propagation: pods and
//     claims stay, and the next pass creates it anew. Claims are grown in place.
//   - Scale-down goes one server at a time, each emptied first (scaleDown).
//
// hold is true when the StatefulSet must not be applied this pass.
func (r *Reconciler) guardStatefulSet(ctx context.Context, c *v1alpha1.NatsCluster, desired *appsv1.StatefulSet, silent *[]string) (hold bool, _ *status.Blocker, _ error) {
	var live appsv1.StatefulSet
	err := r.Get(ctx, client.ObjectKeyFromObject(desired), &live)
	if apierrors.IsNotFound(err) || (err == nil && !metav1.IsControlledBy(&live, c)) {
		return false, nil, nil // new, or a conflict the applier reports
	}
	if err != nil {
		return false, nil, err
	}
	if !live.DeletionTimestamp.IsZero() {
		return true, &status.Blocker{Reason: v1alpha1.ReasonProgressing, Message: "waiting for the old StatefulSet to be replaced"}, nil
	}
	if field := immutableChange(&live, desired); field != "" {
		if err := r.growClaims(ctx, c, &live); err != nil {
			return false, nil, err
		}
		orphan := metav1.DeletePropagationOrphan
		if err := r.Delete(ctx, &live, &client.DeleteOptions{PropagationPolicy: &orphan}); client.IgnoreNotFound(err) != nil {
			return false, nil, err
		}
		return true, &status.Blocker{Reason: v1alpha1.ReasonProgressing,
			Message: fmt.Sprintf("replacing the StatefulSet to change its %s; pods and claims are kept", field)}, nil
	}
	pods, err := servers.ServerPods(ctx, r.Client, c, &live)
	if err != nil {
		return false, nil, err
	}
	if blocker, err := r.versionChangeRefusal(ctx, c, &live, pods, silent); err != nil || blocker != nil {
		return true, blocker, err
	}
	allowed, blocker, err := r.scaleDown(ctx, c, ptr.Deref(live.Spec.Replicas, 1), pods)
	desired.Spec.Replicas = ptr.To(allowed)
	return false, blocker, err
}

// immutableChange names the first StatefulSet field that differs and cannot
// be updated, or "".
func immutableChange(live, desired *appsv1.StatefulSet) string {
	switch {
	case live.Spec.ServiceName != desired.Spec.ServiceName:
		return "serviceName"
	case live.Spec.PodManagementPolicy != desired.Spec.PodManagementPolicy:
		return "podManagementPolicy"
	case !equality.Semantic.DeepEqual(live.Spec.Selector, desired.Spec.Selector):
		return "selector"
	case len(live.Spec.VolumeClaimTemplates) != len(desired.Spec.VolumeClaimTemplates):
		return "volume claim templates"
	}
	for i, d := range desired.Spec.VolumeClaimTemplates {
		l := live.Spec.VolumeClaimTemplates[i]
		if !l.Spec.Resources.Requests.Storage().Equal(*d.Spec.Resources.Requests.Storage()) ||
			!equality.Semantic.DeepEqual(l.Spec.StorageClassName, d.Spec.StorageClassName) {
			return "volume claim template"
		}
	}
	return ""
}

// growClaims asks every existing claim of the servers of live (c's
// StatefulSet) for the new store size. Claims belong to the StatefulSet's
// pods, not to the NatsCluster, so this is a plain patch of one field
// rather than an apply of an owned object.
func (r *Reconciler) growClaims(ctx context.Context, c *v1alpha1.NatsCluster, live *appsv1.StatefulSet) error {
	size := c.Spec.JetStream.FileStore.Size
	if size == nil || !c.Spec.JetStreamEnabled() {
		return nil
	}
	var claims corev1.PersistentVolumeClaimList
	if err := r.APIReader.List(ctx, &claims, client.InNamespace(c.Namespace), client.MatchingLabels(render.SelectorLabels(c))); err != nil {
		return err
	}
	for i := range claims.Items {
		claim := &claims.Items[i]
		if !memberClaim(c, claim, live) || claim.Spec.Resources.Requests.Storage().Cmp(*size) >= 0 {
			continue
		}
		patch := client.MergeFrom(claim.DeepCopy())
		claim.Spec.Resources.Requests[corev1.ResourceStorage] = *size
		if err := r.Patch(ctx, claim, patch); err != nil {
			return fmt.Errorf("growing claim %s: %w", claim.Name, err)
		}
	}
	return nil
}
