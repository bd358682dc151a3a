// Package natscluster holds the NatsCluster controller. Its files read as
// a pass does: Reconcile (reconcile.go) settles the spec, applies the
// children (children_*), observes the servers (observe_*), steps a rollout
// (rollout_*) or a scale-down (scaledown_*), reloads the configuration
// (reload_*), rotates the operator's keys (keys_*), and writes the status
// once (status_*). The mesh stages (mesh_*), the deletion guard
// (deletion_*) and the operator's policies (policy_*) sit beside them;
// setup* registers the controller and its watches. It reaches servers only
// through the Servers interface (internal/servers), and imports no other
// controller.
package natscluster

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/apply"
	"github.com/kubenats/kubenats/internal/servers"
)

// Reconciler runs the servers of every NatsCluster.
type Reconciler struct {
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
	// Nodes reads the nodes' zones; nil in a namespaced install, where
	// the operator may not read nodes (the servers' own zones decide).
	Nodes *NodeZones
	// OperatorPaused pauses every cluster (--pause-reconciliation), as the
	// annotation pauses one (reconcilePaused).
	OperatorPaused bool

	meshTrouble meshTrouble
	// meshModes: since when each cluster's policy has had its mode.
	meshModes meshModes

	reloads reloads
	// leaders: the occasion of each cluster's last finished balance.
	leaders leaderRounds
}

// Servers is how the NatsCluster controller reaches a cluster's servers:
// the system user's credentials, the client TLS and the pinned dial.
type Servers interface {
	Access(ctx context.Context, c *v1alpha1.NatsCluster) (servers.Access, error)
}

func (r *Reconciler) workers() int {
	if r.Workers > 0 {
		return r.Workers
	}
	return DefaultNatsClusterWorkers
}
