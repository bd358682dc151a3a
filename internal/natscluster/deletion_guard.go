package natscluster

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/servers"
	"github.com/kubenats/kubenats/internal/status"
)

// guardRetry is how soon a held deletion looks again: streams emptied or
// users gone raise no event on the cluster.
const guardRetry = 5 * time.Second

// holdDeletion puts the deletion guard on a live cluster, once.
func (r *Reconciler) holdDeletion(ctx context.Context, live *v1alpha1.NatsCluster) error {
	if controllerutil.ContainsFinalizer(live, v1alpha1.DeletionGuardFinalizer) {
		return nil
	}
	orig := live.DeepCopy()
	controllerutil.AddFinalizer(live, v1alpha1.DeletionGuardFinalizer)
	return r.Patch(ctx, live, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}

// guardDeletion lets a deleted cluster go (garbage collection then takes
// its children, and the claims follow the retention policy) once
// plan.Deletion says so, and says in its status what it waits for until
// then.
func (r *Reconciler) guardDeletion(ctx context.Context, live *v1alpha1.NatsCluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(live, v1alpha1.DeletionGuardFinalizer) {
		return ctrl.Result{}, nil
	}
	obs, err := r.observeDeletion(ctx, live)
	if err != nil {
		return ctrl.Result{}, err
	}
	v := plan.Deletion(obs)
	if v.Release {
		orig := live.DeepCopy()
		controllerutil.RemoveFinalizer(live, v1alpha1.DeletionGuardFinalizer)
		return ctrl.Result{}, client.IgnoreNotFound(r.Patch(ctx, live, client.MergeFrom(orig)))
	}
	prev := meta.FindStatusCondition(live.Status.Conditions, v1alpha1.ConditionDeleting)
	if prev == nil || prev.Reason != v.Reason {
		r.Recorder.Eventf(live, nil, corev1.EventTypeWarning, v.Reason, "Delete", "%s", status.BoundMessage(v.Message))
	}
	next := live.DeepCopy()
	meta.SetStatusCondition(&next.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionDeleting, Status: metav1.ConditionTrue,
		Reason: v.Reason, Message: status.BoundMessage(v.Message), ObservedGeneration: live.Generation})
	if err := r.writeStatus(ctx, live, next.Status); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: guardRetry}, nil
}

// observeDeletion gathers what plan.Deletion weighs.
func (r *Reconciler) observeDeletion(ctx context.Context, c *v1alpha1.NatsCluster) (plan.DeletionObservation, error) {
	obs := plan.DeletionObservation{Allowed: c.Annotations[plan.AnnotationDeleteWithData] == "true"}
	if obs.Allowed {
		return obs, nil
	}
	var ns corev1.Namespace
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: c.Namespace}, &ns); client.IgnoreNotFound(err) != nil {
		return obs, err
	}
	if obs.NamespaceGoing = !ns.DeletionTimestamp.IsZero(); obs.NamespaceGoing {
		return obs, nil
	}
	users, err := r.usersOf(ctx, c)
	if err != nil {
		return obs, err
	}
	obs.Users = users
	var sts appsv1.StatefulSet
	switch err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.StatefulSetName()}, &sts); {
	case apierrors.IsNotFound(err):
		return obs, nil
	case err != nil:
		return obs, err
	}
	pods, err := servers.ServerPods(ctx, r.Client, c, &sts)
	if err != nil {
		return obs, err
	}
	running := servers.ReadyPods(pods)
	if obs.ServersRunning = len(running) > 0; !obs.ServersRunning {
		return obs, nil
	}
	views := r.jetStreamViews(ctx, c.WithDefaults(), running)
	obs.Read = true
	held := map[[2]string]uint64{}
	for _, view := range views {
		if view == nil {
			obs.Read = false
			continue
		}
		for _, acc := range view.Accounts {
			for _, st := range acc.Streams {
				key := [2]string{acc.Name, st.Name}
				held[key] = max(held[key], st.Messages)
			}
		}
	}
	for key, n := range held {
		if n > 0 {
			obs.Streams = append(obs.Streams, plan.StreamHolding{Account: key[0], Stream: key[1], Messages: n})
		}
	}
	return obs, nil
}

// usersOf are the resources of other namespaces that name c and that c
// serves, as namespace/kind/name: JetStream objects of the namespaces
// spec.jetstream.allowedNamespaces lets in, NatsAccounts of those
// spec.auth.accounts admits. A resource c never served holds nothing on
// it (its condition says the cluster refused it): counting it would let
// any namespace hold any cluster's deletion by naming it.
func (r *Reconciler) usersOf(ctx context.Context, c *v1alpha1.NatsCluster) ([]string, error) {
	var out []string
	for _, list := range []client.ObjectList{&v1alpha1.StreamList{}, &v1alpha1.ConsumerList{}, &v1alpha1.KeyValueList{}, &v1alpha1.ObjectStoreList{}} {
		if err := r.List(ctx, list); err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			obj, ok := item.(v1alpha1.JetStreamObject)
			if !ok {
				continue
			}
			// An unset namespace is the object's own, never c's here.
			if ref := obj.GetTarget().Cluster; ref != nil && obj.GetNamespace() != c.Namespace &&
				ref.Namespace == c.Namespace && ref.Name == c.Name && servesJetStreamOf(c, obj.GetNamespace()) {
				out = append(out, fmt.Sprintf("%s/%s/%s", obj.GetNamespace(), kindOf(obj), obj.GetName()))
			}
		}
	}
	var accts v1alpha1.NatsAccountList
	if err := r.List(ctx, &accts); err != nil {
		return nil, err
	}
	labels := map[string]map[string]string{} // namespace labels, read once each
	for i := range accts.Items {
		a := &accts.Items[i]
		if ns, name := accounts.ClusterOf(a); ns != c.Namespace || name != c.Name || a.Namespace == c.Namespace {
			continue
		}
		if _, read := labels[a.Namespace]; !read && accounts.NeedsNamespaceLabels(c, a.Namespace) {
			var ns corev1.Namespace
			if err := r.APIReader.Get(ctx, client.ObjectKey{Name: a.Namespace}, &ns); client.IgnoreNotFound(err) != nil {
				return nil, err
			}
			labels[a.Namespace] = ns.Labels
		}
		if admittedAccountsOf(c, a.Namespace, labels[a.Namespace]) {
			out = append(out, fmt.Sprintf("%s/NatsAccount/%s", a.Namespace, a.Name))
		}
	}
	return out, nil
}

// servesJetStreamOf reports whether c takes JetStream resources of
// namespace ns (not its own): spec.jetstream.allowedNamespaces lists it.
func servesJetStreamOf(c *v1alpha1.NatsCluster, ns string) bool {
	return c.Spec.JetStream.AdmitsNamespace(ns)
}

// admittedAccountsOf reports whether c admits NatsAccounts of namespace
// ns (labelled nsLabels) as it stood before its deletion: accounts.Admits
// admits nothing of a cluster being deleted, and the guard asks what the
// cluster served until then.
func admittedAccountsOf(c *v1alpha1.NatsCluster, ns string, nsLabels map[string]string) bool {
	live := c.DeepCopy()
	live.DeletionTimestamp = nil
	return accounts.Admits(live, ns, nsLabels)
}
