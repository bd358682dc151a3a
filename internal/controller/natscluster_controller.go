// Package controller holds the reconcilers: one per kind, each split by
// concern into reconcile_*.go files that read like a table of contents.
package controller

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	securityv1 "istio.io/client-go/pkg/apis/security/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/apply"
	"github.com/kubenats/kubenats/internal/namespaceshare"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/servers"
	"github.com/kubenats/kubenats/internal/status"
	"github.com/kubenats/kubenats/internal/usersecrets"
)

// NatsClusterReconciler runs the servers of every NatsCluster.
type NatsClusterReconciler struct {
	client.Client
	// APIReader reads past the label-filtered caches: the claims, which
	// belong to the StatefulSet's pods, and a generated Secret the cache
	// has not seen yet (ownedSecret).
	APIReader client.Reader
	// UserSecrets holds the Secrets their owners opted in for kubenats
	// (SecretAllowLabel), the only user Secrets the operator reads; a change
	// of one wakes the clusters that name it.
	UserSecrets cache.Cache
	Applier     *apply.Applier
	Recorder    recorder.EventRecorder
	Versions    *VersionProbe
	// ClusterDomain is the DNS suffix of Services, for certificate names;
	// cluster.local when empty.
	ClusterDomain string
	// Servers reaches the cluster's servers (servers.Reach).
	Servers Servers
	// Istio tells whether Istio's CRDs are installed.
	Istio *CRDProbe
	// PrometheusOperator tells whether the Prometheus Operator's CRDs are
	// installed; nil: they are taken as missing.
	PrometheusOperator *CRDProbe
	// ExporterImage is the image of the servers' metrics containers: the
	// operator's own (--exporter-image).
	ExporterImage string
	// OperatorNamespace is where the operator runs (--namespace): the
	// monitoring ports' policy admits its pods there.
	OperatorNamespace string
	// NativeSidecars: the cluster runs Istio's proxy as a native sidecar
	// (Kubernetes 1.33 and later); nil when unknown.
	NativeSidecars *bool
	// Images limits spec.image (--allowed-image-registries); the zero
	// value allows any image.
	Images ImagePolicy
	// Issuers limits the ClusterIssuers TLS may name
	// (--allowed-cluster-issuers); the zero value allows any.
	Issuers IssuerPolicy
	// Ingresses limits the hosts and annotations of WebSocket Ingresses
	// (--allowed-ingress-hosts, --allowed-ingress-annotations); the zero
	// value allows any host and no annotation.
	Ingresses IngressPolicy
	// MeshRollbackAfter is how long trouble under STRICT is borne before
	// going back to PERMISSIVE (rollback: Automatic) or reporting it
	// (Report); DefaultMeshRollbackAfter when zero.
	MeshRollbackAfter time.Duration
	// Workers is how many NatsClusters are reconciled at once;
	// DefaultNatsClusterWorkers when zero.
	Workers int
	// WorkersPerNamespace is how many of them one namespace's clusters may
	// hold at once (namespaceShare); a quarter of Workers when zero.
	WorkersPerNamespace int
	// RouteCertRenewBefore is how long before its end the operator's own
	// route certificate is renewed; zero: once two thirds of its life
	// have passed (pki.Due).
	RouteCertRenewBefore time.Duration
	// AnswerBound is how long a ready server has to answer on its monitor
	// port before it counts as hung; DefaultAnswerBound when zero.
	AnswerBound time.Duration
	// MeshPushAllowance is how long istiod is given to push a policy change
	// to every sidecar before a stage that needs it in force;
	// DefaultMeshPushAllowance when zero.
	MeshPushAllowance time.Duration

	meshTrouble meshTrouble
	// meshModes: since when each cluster's policy has had its mode.
	meshModes meshModes

	reloads reloads
}

// Servers is how the NatsCluster controller reaches a cluster's servers:
// the system user's credentials, the client TLS and the pinned dial.
type Servers interface {
	Access(ctx context.Context, c *v1alpha1.NatsCluster) (servers.Access, error)
}

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

// Reconcile brings one NatsCluster's children to what its spec says, then
// writes its status once.
func (r *NatsClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var live v1alpha1.NatsCluster
	if err := r.Get(ctx, req.NamespacedName, &live); err != nil {
		if apierrors.IsNotFound(err) {
			forgetMetrics(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !live.DeletionTimestamp.IsZero() {
		forgetMetrics(req.Namespace, req.Name)
		// Once the guard lets it go, garbage collection removes the
		// children.
		return r.guardDeletion(ctx, &live)
	}
	if err := r.holdDeletion(ctx, &live); err != nil {
		return ctrl.Result{}, err
	}
	c := live.WithDefaults()
	if err := r.settleClientPlaintext(ctx, c); err != nil {
		return ctrl.Result{}, err
	}

	mesh, err := r.planMesh(ctx, c)
	if err != nil {
		return ctrl.Result{}, err
	}
	obs := status.ClusterObservation{Cluster: c, Now: metav1.Now()}
	result, blocker, want, applyErr := r.reconcileChildren(ctx, c, &obs, mesh.stage())
	if blocker == nil && applyErr == nil {
		if applyErr = r.finishMesh(ctx, c, mesh); applyErr != nil {
			blocker = &status.Blocker{Reason: v1alpha1.ReasonApplyFailed, Message: applyErr.Error()}
		}
	}
	pods, hung, err := r.observe(ctx, c, &obs)
	if err != nil {
		return ctrl.Result{}, err
	}
	if blocker == nil && applyErr == nil {
		var wait time.Duration
		blocker, wait, err = r.rollout(ctx, c, obs.StatefulSet, pods, hung)
		if err != nil {
			return ctrl.Result{}, err
		}
		result.RequeueAfter = wait
	}
	if obs.Takeover = takeoverProgress(c, obs.StatefulSet, pods, blocker); obs.Takeover != nil && (c.Status.Takeover == nil || *obs.Takeover != *c.Status.Takeover) {
		// The next phase renders other routes: the status write that
		// records it wakes no pass.
		result.RequeueAfter = soonest(result.RequeueAfter, settleRetry)
	}
	obs.ConfigLoaded = configNotLoaded(v1alpha1.ReasonReloadNotChecked, "not checked: the pass stopped short")
	// want is nil when the children were not applied; a rollout under way
	// is no reason not to look (plan.Reload leaves outdated servers to it).
	if applyErr == nil && want != nil {
		var retry time.Duration
		obs.ConfigLoaded, retry = r.reloadConfig(ctx, c, &obs, pods, hung, want)
		result.RequeueAfter = soonest(result.RequeueAfter, retry)
	}
	if render.HasTrust(c) {
		var retry time.Duration
		if obs.OperatorKeys, retry, err = r.rotateOperatorKeys(ctx, c, blocker == nil && applyErr == nil && want != nil); err != nil {
			return ctrl.Result{}, err
		}
		result.RequeueAfter = soonest(result.RequeueAfter, retry)
	}
	// What the servers report (a hang, a store filling up or emptied by a
	// purge) raises no Kubernetes event: an idle cluster is looked at
	// again now and then, a hung server soon, until it answers.
	switch {
	case len(hung) > 0:
		result.RequeueAfter = soonest(result.RequeueAfter, settleRetry)
	case len(pods) > 0:
		result.RequeueAfter = soonest(result.RequeueAfter, idleRecheck)
	}
	obs.Blocker, obs.Mesh = blocker, mesh.verdict()
	if c.Spec.MonitoringEnabled() {
		obs.Monitoring = monitoringVerdict(c, r.prometheusOperator())
	}
	result.RequeueAfter = soonest(result.RequeueAfter, mesh.retry())
	next := status.NatsCluster(obs)
	recordMetrics(c, &obs, next)
	r.announce(c, live.Status, next)
	r.announceStorage(c, live.Status, next)
	if err := r.writeStatus(ctx, &live, next); apierrors.IsConflict(err) {
		// The cache has not seen our previous write yet; its own event is
		// filtered out (status only), so look again shortly.
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	} else if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err) // deleted meanwhile
	}
	if applyErr != nil {
		return ctrl.Result{}, applyErr
	}
	return result, nil
}

// conflictRetry is how soon a pass whose status write lost a race runs again.
const conflictRetry = 100 * time.Millisecond

// writeStatus writes next unless it equals what is there: an idle pass makes
// no request at all.
func (r *NatsClusterReconciler) writeStatus(ctx context.Context, live *v1alpha1.NatsCluster, next v1alpha1.NatsClusterStatus) error {
	if equality.Semantic.DeepEqual(live.Status, next) {
		return nil
	}
	live.Status = next
	return r.Status().Update(ctx, live)
}

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
func (r *NatsClusterReconciler) SetupWithManager(mgr ctrl.Manager) error {
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

func (r *NatsClusterReconciler) workers() int {
	if r.Workers > 0 {
		return r.Workers
	}
	return DefaultNatsClusterWorkers
}
