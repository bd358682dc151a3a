// Package manager wires the operator: scheme, caches, controllers. The
// command and the envtest suites both build the manager here, so the tests
// run exactly the wiring that ships.
package manager

import (
	"cmp"
	"net"
	"net/netip"
	"time"

	"github.com/nats-io/nats.go"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accountcontroller"
	"github.com/kubenats/kubenats/internal/apply"
	"github.com/kubenats/kubenats/internal/backupcontroller"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/jetstreamcontroller"
	"github.com/kubenats/kubenats/internal/metrics"
	"github.com/kubenats/kubenats/internal/natscluster"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/schedulecontroller"
	"github.com/kubenats/kubenats/internal/serverbudget"
	"github.com/kubenats/kubenats/internal/servers"
)

// Options are the manager's settings, from the command line.
type Options struct {
	// MetricsBindAddress serves Prometheus metrics, over HTTPS to
	// authenticated and authorized callers; "0" disables.
	MetricsBindAddress string
	// InsecureMetrics serves them over plain HTTP to anyone: for a local
	// run, never in a cluster.
	InsecureMetrics bool
	// MetricsCertDir holds the metrics endpoint's certificate (tls.crt,
	// tls.key: a mounted Secret, cert-manager's); empty: a self-signed one
	// made in memory.
	MetricsCertDir string
	// HealthProbeBindAddress serves /healthz and /readyz; "0" disables.
	HealthProbeBindAddress string
	LeaderElection         bool
	// LeaderElectionNamespace is where the lease lives when running outside
	// a cluster.
	LeaderElectionNamespace string
	// LeaderElectionLeaseDuration is how long a lease holds after its
	// holder stops renewing it: how long a replacement waits after the
	// leader dies. Zero keeps controller-runtime's 15 s.
	LeaderElectionLeaseDuration time.Duration
	// NatsClusterWorkers is how many NatsClusters are reconciled in
	// parallel: a pass that waits on a hung cluster's servers holds one
	// worker, not the others' (natscluster.DefaultNatsClusterWorkers when
	// zero).
	NatsClusterWorkers int
	// NatsClusterWorkersPerNamespace is how many of those workers one
	// namespace's clusters may hold at once, so that one tenant's hung
	// clusters cannot take them all (a quarter of the workers when zero).
	NatsClusterWorkersPerNamespace int
	// ServerAnswerBound is how long a ready server has to answer the
	// operator on its monitor port before it counts as hung
	// (natscluster.DefaultAnswerBound when zero).
	ServerAnswerBound time.Duration
	// RouteCertificateRenewBefore is how long before its end the route
	// certificate the operator issues from its own CA is renewed; zero:
	// once two thirds of its 90 days have passed.
	RouteCertificateRenewBefore time.Duration
	// JetStreamWorkers is how many JetStream resources of each kind are
	// reconciled in parallel.
	JetStreamWorkers int
	// JetStreamWorkersPerNamespace is how many of those one namespace's
	// resources may hold at once (a quarter of the workers when zero).
	JetStreamWorkersPerNamespace int
	// NatsAccountWorkers is how many NatsAccounts are reconciled in
	// parallel (accountcontroller's default when zero);
	// NatsAccountWorkersPerNamespace how many of them one namespace's
	// accounts may hold at once (a quarter when zero, at least one).
	NatsAccountWorkers, NatsAccountWorkersPerNamespace int
	// ServerLimits size the operator's budgets for what NATS servers send
	// (bytes, and a namespace's share) and its connections to them (in all
	// and to one namespace's servers); zero fields keep the defaults,
	// which fit its 128Mi container (serverbudget).
	ServerLimits serverbudget.Limits
	// PprofBindAddress serves net/http/pprof, for profiling; "" or "0"
	// disables it.
	PprofBindAddress string
	// Dialer, when set, replaces TCP dialing to NATS: tests use it to
	// resolve cluster DNS names that exist only inside a real cluster.
	Dialer nats.CustomDialer
	// WatchNamespaces, when set, confines the operator to these
	// namespaces: its caches list and watch nothing elsewhere, so Roles (or
	// RoleBindings to its ClusterRole) in them are all the RBAC it needs.
	WatchNamespaces []string
	// AllowLocalTargets lets connection.servers reach loopback, link-local
	// and API server addresses, which are refused otherwise. Tests need it:
	// their servers run on 127.0.0.1.
	AllowLocalTargets bool
	// ConnectionAllowedCIDRs, when set, are all that connection.servers of
	// JetStream resources may reach (the deny list still applies inside).
	ConnectionAllowedCIDRs []netip.Prefix
	// ConnectionAllowedNamespaces, when set, are the only namespaces whose
	// JetStream resources may use spec.connection at all; the others may
	// name only a NatsCluster.
	ConnectionAllowedNamespaces []string
	// ConnectionAllowOtherNamespaces lets connection.servers reach the
	// pods and Services of other namespaces than the resource's; by
	// default an address one of them holds is refused.
	ConnectionAllowOtherNamespaces bool
	// MeshRollbackAfter is how long a meshed cluster in trouble under
	// STRICT is borne before going back to PERMISSIVE, where the spec allows
	// it, or reporting it; the default when
	// zero (natscluster.DefaultMeshRollbackAfter).
	MeshRollbackAfter time.Duration
	// MeshPushAllowance is how long istiod is given to push a policy
	// change to every sidecar before a stage that needs it in force
	// (natscluster.DefaultMeshPushAllowance when zero).
	MeshPushAllowance time.Duration
	// SigningKeyGrace is how long a NatsAccount's rotated-out signing key
	// stays at least (accountcontroller.DefaultSigningKeyGrace when zero).
	SigningKeyGrace time.Duration
	// AllowedImageRegistries limits spec.image to images under these
	// registries or repositories (natscluster.ParseImagePolicy); empty:
	// any image.
	AllowedImageRegistries []string
	// AllowedClusterIssuers are the only ClusterIssuers a NatsCluster's
	// TLS may name (natscluster.ParseIssuerPolicy); empty: none. Issuers of
	// the cluster's own namespace are always allowed.
	AllowedClusterIssuers []string
	// AllowedIngressHosts, when not nil, are the only hosts a WebSocket
	// Ingress may route (natscluster.ParseIngressPolicy): names, or
	// *.<domain> for one label under it; empty but not nil: none.
	AllowedIngressHosts *[]string
	// AllowedIngressAnnotations are the only annotations a WebSocket
	// Ingress may carry: keys, or prefixes ending in "*"; empty: none.
	AllowedIngressAnnotations []string
	// RepeatedInProcess lets a test process build the operator more than
	// once, one after another (a benchmark run with -count): controller
	// names are checked to be unique per process, for their metrics, and a
	// stopped operator's names stay taken.
	RepeatedInProcess bool
	// WebhookBindAddress serves the validating webhook (HTTPS, for the API
	// server); "" or "0" disables it.
	WebhookBindAddress string
	// WebhookListener, when set, is where the webhook serves instead: a
	// test's listener on a port it chose.
	WebhookListener net.Listener
	// WebhookCertNames are the DNS names (or addresses) the webhook's
	// serving certificate is for: how the API server dials it.
	WebhookCertNames []string
	// Namespace is the operator's own, where the webhook's certificate is
	// kept.
	Namespace string
	// ExporterImage is the image of the servers' metrics containers
	// (spec.monitoring): the operator's own; render's default when empty.
	ExporterImage string
	// PauseReconciliation pauses every NatsCluster and JetStream resource
	// (--pause-reconciliation), as their annotation pauses one: before an
	// operator or CRD upgrade, nothing is changed and status still says
	// what is observed.
	PauseReconciliation bool
}

// Scheme knows the built-in kinds and kubenats'.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	// Istio's PeerAuthentication: known whether or not its CRD is
	// installed; nothing reads or watches it unless it is.
	_ = securityv1.AddToScheme(s)
	// The Prometheus Operator's PodMonitor and PrometheusRule, likewise.
	_ = monitoringv1.AddToScheme(s)
	return s
}

// New builds the manager with every controller registered.
func New(cfg *rest.Config, o Options) (ctrl.Manager, error) {
	if err := pki.CheckRenewBefore(o.RouteCertificateRenewBefore); err != nil {
		return nil, err
	}
	if err := checkWebhook(o); err != nil {
		return nil, err
	}
	if err := checkMetricsCert(o); err != nil {
		return nil, err
	}
	if err := serverbudget.Configure(o.ServerLimits); err != nil {
		return nil, err
	}
	scheme := Scheme()
	byObject := ownedOnly(istioInstalled(cfg))
	webhookCache(o, byObject)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 MetricsOptions(o),
		HealthProbeBindAddress:  o.HealthProbeBindAddress,
		PprofBindAddress:        o.PprofBindAddress,
		LeaderElection:          o.LeaderElection,
		LeaderElectionID:        "kubenats.kubenats.io",
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		LeaseDuration:           leaseDuration(o.LeaderElectionLeaseDuration),
		RenewDeadline:           leaseShare(o.LeaderElectionLeaseDuration, 10),
		RetryPeriod:             leaseShare(o.LeaderElectionLeaseDuration, 2),
		Controller:              config.Controller{SkipNameValidation: &o.RepeatedInProcess},
		Cache: cache.Options{
			DefaultNamespaces: namespaces(o.WatchNamespaces),
			ByObject:          byObject,
			// Nothing reads managedFields from the cache; they are often
			// half of an object's size, and a thousand resources are cached.
			DefaultTransform: cache.TransformStripManagedFields(),
		},
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	userSecrets, err := userSecretCache(mgr, o.WatchNamespaces)
	if err != nil {
		return nil, err
	}
	images, err := natscluster.ParseImagePolicy(o.AllowedImageRegistries)
	if err != nil {
		return nil, err
	}
	issuers, err := natscluster.ParseIssuerPolicy(o.AllowedClusterIssuers)
	if err != nil {
		return nil, err
	}
	ingresses, err := natscluster.ParseIngressPolicy(o.AllowedIngressHosts, o.AllowedIngressAnnotations)
	if err != nil {
		return nil, err
	}
	applier := &apply.Applier{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Scheme: scheme}
	reach := &servers.Reach{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), UserSecrets: userSecrets, Dialer: o.Dialer}
	clusters := &natscluster.Reconciler{
		Client:             mgr.GetClient(),
		APIReader:          mgr.GetAPIReader(),
		UserSecrets:        userSecrets,
		Applier:            applier,
		Recorder:           mgr.GetEventRecorder("kubenats"),
		Versions:           natscluster.NewVersionProbe(2*time.Second, o.Dialer),
		Servers:            reach,
		Istio:              natscluster.IstioProbe(mgr.GetRESTMapper()),
		PrometheusOperator: natscluster.PrometheusOperatorProbe(mgr.GetRESTMapper()),
		ExporterImage:      o.ExporterImage,
		OperatorNamespace:  o.Namespace,
		// Istio's injector makes the proxy a native sidecar from the
		// Kubernetes version where they are stable.
		NativeSidecars:      nativeSidecars(cfg),
		MeshRollbackAfter:   o.MeshRollbackAfter,
		MeshPushAllowance:   o.MeshPushAllowance,
		Images:              images,
		Issuers:             issuers,
		Ingresses:           ingresses,
		Workers:             o.NatsClusterWorkers,
		WorkersPerNamespace: o.NatsClusterWorkersPerNamespace,
		AnswerBound:         o.ServerAnswerBound,
		OperatorPaused:      o.PauseReconciliation,
		Nodes:               nodeZones(mgr, o.WatchNamespaces),

		RouteCertRenewBefore: o.RouteCertificateRenewBefore,
	}
	if err := clusters.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	accountsReconciler := &accountcontroller.Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Applier:   applier,
		Scheme:    scheme,
		Recorder:  mgr.GetEventRecorder("kubenats"),
		Servers:   reach,

		Workers:             o.NatsAccountWorkers,
		WorkersPerNamespace: o.NatsAccountWorkersPerNamespace,
		SigningKeyGrace:     o.SigningKeyGrace,
	}
	if err := accountsReconciler.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	// Backups and restores run as Jobs of the operator's own image, which
	// carries kubenats-backup beside the operator.
	operatorImage := cmp.Or(o.ExporterImage, render.DefaultExporterImage)
	backups := &backupcontroller.Reconciler{Client: mgr.GetClient(), Applier: applier,
		Recorder: mgr.GetEventRecorder("kubenats"), Image: operatorImage, OperatorPaused: o.PauseReconciliation, UserSecrets: userSecrets}
	if err := backups.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	schedules := &schedulecontroller.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("kubenats"),
		OperatorPaused: o.PauseReconciliation}
	if err := schedules.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	// The API server's addresses as the cluster publishes them, read again
	// by a dial that finds them older than a minute.
	apiServer := &publishedAPIServer{reader: mgr.GetAPIReader()}
	pool := &jetstream.Pool{Dialer: o.Dialer, IdleTimeout: 5 * time.Minute,
		Targets: jetstream.TargetPolicy{AllowLocal: o.AllowLocalTargets, APIServer: apiServerAddrs(cfg),
			APIServerNow: apiServer.Addrs, AllowedCIDRs: o.ConnectionAllowedCIDRs,
			Holders:         (&addressHolders{reader: mgr.GetAPIReader(), namespaces: o.WatchNamespaces}).Of,
			OtherNamespaces: o.ConnectionAllowOtherNamespaces},
		ServerPods: servers.ServerPodAddrs(mgr.GetClient())}
	if err := mgr.Add(pool); err != nil {
		return nil, err
	}
	servePoolMetrics(pool)
	metrics.Register()
	base := &jetstreamcontroller.Base{
		Client:      mgr.GetClient(),
		APIReader:   mgr.GetAPIReader(),
		UserSecrets: userSecrets,
		Servers:     reach,
		Pool:        pool,
		Recorder:    mgr.GetEventRecorder("kubenats"),
		Namespaces:  o.WatchNamespaces,

		ConnectionNamespaces: o.ConnectionAllowedNamespaces,
		OperatorPaused:       o.PauseReconciliation,
		Applier:              applier,
		Image:                operatorImage,
	}
	workers := o.JetStreamWorkers
	if workers <= 0 {
		workers = 16
	}
	if err := setupJetStream(mgr, base, workers, o.JetStreamWorkersPerNamespace); err != nil {
		return nil, err
	}
	if err := setupWebhook(mgr, o); err != nil {
		return nil, err
	}
	return mgr, nil
}
