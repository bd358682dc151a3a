package natscluster

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	securityv1 "istio.io/client-go/pkg/apis/security/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/namespaceshare"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/usersecrets"
)

// +kubebuilder:rbac:groups=kubenats.io,resources=natsclusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=kubenats.io,resources=natsclusters/status,verbs=update
// Owner references with blockOwnerDeletion need update on the owner's
// finalizers where the OwnerReferencesPermissionEnforcement admission
// plugin runs.
// +kubebuilder:rbac:groups=kubenats.io,resources=natsclusters/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps;services;serviceaccounts;secrets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete;patch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;list;watch;create;patch

// podOwner maps a server pod (or a Secret cert-manager labelled for a
// cluster) to its NatsCluster by the instance label.
func podOwner(_ context.Context, pod client.Object) []reconcile.Request {
	name := pod.GetLabels()[render.LabelInstance]
	if name == "" || pod.GetLabels()[render.LabelManagedBy] != render.ManagedBy {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: pod.GetNamespace(), Name: name}}}
}

// SetupWithManager registers the reconciler. Only spec changes of the
// NatsCluster itself wake it (its own status writes do not); any change of a
// child does.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.NatsCluster{}, usersecrets.Index, clusterSecrets); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr)
	// Istio's policies are watched only when its CRDs are there: a watch
	// of a kind the API server does not serve would keep the manager from
	// starting. Istio installed later is noticed by the clusters that ask
	// for it (they look again every half minute), without the watch: a
	// change someone else makes to a policy is then undone on the next
	// pass rather than at once (restart the operator to get the watch).
	if installed, err := r.Istio.Installed(); err != nil {
		return err
	} else if installed {
		b = b.Owns(&securityv1.PeerAuthentication{})
	}
	return b.
		// Annotations too: AnnotationRegenerateSecrets is the user's word.
		For(&v1alpha1.NatsCluster{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Owns(&corev1.ServiceAccount{}).
		Owns(&corev1.ConfigMap{}).
		Owns(&corev1.Secret{}).
		Owns(&corev1.Service{}).
		Owns(&appsv1.StatefulSet{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Owns(&networkingv1.NetworkPolicy{}).
		Owns(&networkingv1.Ingress{}).
		// Pods belong to the StatefulSet, not to the NatsCluster; they are
		// watched for the version they report and for their readiness,
		// which may reach the cache after the StatefulSet's status does.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podOwner)).
		// cert-manager writes the Secrets of issued certificates with the
		// cluster's labels (secretTemplate), not as the cluster's children.
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(podOwner)).
		// A user Secret that changes (rotated, opted in, removed) reaches
		// the servers at once, not at the next retry.
		WatchesRawSource(usersecrets.Source(r.UserSecrets, r.Client, func() client.ObjectList { return &v1alpha1.NatsClusterList{} })).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.workers(), ReconciliationTimeout: natsClusterReconcileTimeout}).
		Complete(namespaceshare.Share(r, r.workers(), r.WorkersPerNamespace))
}

// clusterSecrets are the user Secrets a NatsCluster names: its password or
// token, its own certificates, and its WebSocket Ingress's.
func clusterSecrets(o client.Object) []string {
	spec := o.(*v1alpha1.NatsCluster).Spec
	out := append(o.(*v1alpha1.NatsCluster).LeafnodeUserSecrets(), o.(*v1alpha1.NatsCluster).GatewayUserSecrets()...)
	if ref := spec.Auth.SecretRef; ref != nil {
		out = append(out, ref.Name)
	}
	if n := spec.TLS.Routes.SecretName; n != "" {
		out = append(out, n)
	}
	if n := spec.ClientTLS().SecretName; n != "" {
		out = append(out, n)
	}
	if spec.WebSocketIngressEnabled() {
		out = append(out, spec.WebSocket.Ingress.TLSSecretName)
	}
	return out
}
