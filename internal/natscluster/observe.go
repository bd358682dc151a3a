package natscluster

import (
	"context"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/servers"
	"github.com/kubenats/kubenats/internal/status"
)

// observe reads, from the cache, what the status is computed from: the
// StatefulSet, the client Service, the version the servers report and
// which servers hang. It returns the server pods and the hung ones for the
// rollout.
func (r *Reconciler) observe(ctx context.Context, c *v1alpha1.NatsCluster, obs *status.ClusterObservation) (pods []corev1.Pod, hung []string, _ error) {
	// Objects of these names that c does not control (a conflict the
	// applier reports) tell nothing about c.
	if err := r.observeStatefulSet(ctx, c, obs); err != nil {
		return nil, nil, err
	}
	var svc corev1.Service
	switch err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.ClientServiceName()}, &svc); {
	case err == nil && metav1.IsControlledBy(&svc, c):
		obs.ClientService = &svc
	case err != nil && !apierrors.IsNotFound(err):
		return nil, nil, err
	}
	pods, err := servers.ServerPods(ctx, r.Client, c, obs.StatefulSet)
	if err != nil {
		return nil, nil, err
	}
	obs.OOMKilled = oomKilledServers(pods)
	// Without the access (a Secret not there yet) no server is asked: the
	// version is then the configured one.
	if a, err := r.Servers.Access(ctx, c); err == nil {
		hung = r.hungServers(ctx, pods, a, obs.Silent)
		obs.Hung = hungMessage(hung, r.answerBound())
		obs.ObservedVersion = r.Versions.Oldest(ctx, pods, a)
		if c.Spec.JetStreamEnabled() {
			obs.Stores = r.observeStores(ctx, answering(pods, hung), a)
		}
	}
	// A pass that met a hang waited seconds on it: the StatefulSet it
	// applied at its start has been seen by the StatefulSet controller
	// meanwhile. Read again, a new revision is a rolling update the
	// rollout names as waiting for the hung server, this pass rather than
	// the next (which waits as long again).
	if len(hung) > 0 {
		if err := r.observeStatefulSet(ctx, c, obs); err != nil {
			return nil, nil, err
		}
	}
	return pods, hung, nil
}

// observeStatefulSet reads c's StatefulSet into obs, nil when there is
// none c controls.
func (r *Reconciler) observeStatefulSet(ctx context.Context, c *v1alpha1.NatsCluster, obs *status.ClusterObservation) error {
	var sts appsv1.StatefulSet
	switch err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.StatefulSetName()}, &sts); {
	case err == nil && metav1.IsControlledBy(&sts, c):
		obs.StatefulSet = &sts
	case err != nil && !apierrors.IsNotFound(err):
		return err
	default:
		obs.StatefulSet = nil
	}
	return nil
}

// answering are pods without those found hung: a pass that waited out a
// server's silence once does not wait on it again for each later look
// (a store, a reload check), which would delay what it reports by
// seconds per look.
func answering(pods []corev1.Pod, hung []string) []corev1.Pod {
	if len(hung) == 0 {
		return pods
	}
	out := make([]corev1.Pod, 0, len(pods))
	for _, p := range pods {
		if !slices.Contains(hung, p.Name) {
			out = append(out, p)
		}
	}
	return out
}
