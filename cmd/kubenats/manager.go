package main

import (
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/internal/natscluster"
	"github.com/kubenats/kubenats/internal/pause"
	"github.com/kubenats/kubenats/internal/serverbudget"
	"github.com/kubenats/kubenats/internal/webhook"
)

func runManager(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o manager.Options
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", ":8443", `address of the metrics endpoint (HTTPS, for callers allowed GET /metrics); "0" disables it`)
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-dir", "", "directory holding the metrics endpoint's tls.crt and tls.key (a mounted Secret, cert-manager's), served and watched for renewals; empty: a self-signed certificate")
	fs.BoolVar(&o.InsecureMetrics, "metrics-insecure", false, "serve metrics over plain HTTP without authentication (local runs only)")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", ":8081", `address of /healthz and /readyz; "0" disables them`)
	fs.IntVar(&o.JetStreamWorkers, "jetstream-workers", 16, "JetStream resources of each kind reconciled in parallel")
	fs.IntVar(&o.JetStreamWorkersPerNamespace, "jetstream-workers-per-namespace", 0, "of those, how many one namespace's resources may hold at once, so that one tenant's silent servers cannot take them all; 0: a quarter of the workers")
	fs.IntVar(&o.NatsAccountWorkers, "natsaccount-workers", 0, "NatsAccounts reconciled in parallel; 0: 4")
	fs.IntVar(&o.NatsAccountWorkersPerNamespace, "natsaccount-workers-per-namespace", 0, "of those, how many one namespace's accounts may hold at once (revocations run first whatever the namespace); 0: a quarter of the workers, at least one")
	fs.IntVar(&o.NatsClusterWorkers, "natscluster-workers", natscluster.DefaultNatsClusterWorkers, "NatsClusters reconciled in parallel: a hung cluster's pass holds one of them")
	fs.IntVar(&o.NatsClusterWorkersPerNamespace, "natscluster-workers-per-namespace", 0, "of those, how many one namespace's clusters may hold at once, so that one tenant's hung clusters cannot take them all; 0: a quarter of the workers")
	fs.Func("server-memory-budget", "bytes (a quantity: 64Mi) that what NATS servers send may take in the operator at once, messages being received and answers being read; a message past it closes its connection. Default 64Mi, at least 32Mi", func(v string) error {
		n, err := parseBytes(v)
		o.ServerLimits.Memory = n
		return err
	})
	fs.Func("server-memory-per-namespace", "of that budget, what the servers of one namespace may hold at once; default half of it", func(v string) error {
		n, err := parseBytes(v)
		o.ServerLimits.MemoryPerNamespace = n
		return err
	})
	fs.IntVar(&o.ServerLimits.Connections, "server-connections", serverbudget.DefaultConnections, "NATS connections the operator holds at once, in all (JetStream resources' and the system account's); one more is refused with a condition on its resource")
	fs.IntVar(&o.ServerLimits.ConnectionsPerNamespace, "server-connections-per-namespace", serverbudget.DefaultConnectionsPerNamespace, "of them, how many reach the servers of one namespace (a NatsCluster's, or those a namespace's resources name in connection.servers)")
	fs.DurationVar(&o.RouteCertificateRenewBefore, "route-certificate-renew-before", 0, "how long before its end the route certificate from the operator's own CA is renewed; 0: once two thirds of its 90 days have passed")
	fs.DurationVar(&o.ServerAnswerBound, "server-answer-timeout", natscluster.DefaultAnswerBound, "how long a ready server has to answer on its monitor port before it counts as hung")
	fs.StringVar(&o.PprofBindAddress, "pprof-bind-address", "", `address of net/http/pprof; "0" disables it`)
	fs.StringVar(&o.ExporterImage, "exporter-image", os.Getenv("KUBENATS_IMAGE"), "image of the servers' metrics containers: this operator's own (KUBENATS_IMAGE)")
	fs.BoolVar(&o.PauseReconciliation, pause.Flag, false, "pause every NatsCluster and JetStream resource: nothing is applied or written to the servers, status still reports (before an operator or CRD upgrade); the annotation "+v1alpha1.AnnotationPauseReconciliation+"=true pauses one")
	fs.BoolVar(&o.LeaderElection, "leader-elect", false, "elect a leader among replicas of the operator")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader lease when running outside a cluster")
	fs.DurationVar(&o.LeaderElectionLeaseDuration, "leader-election-lease-duration", 0, "how long the leader's lease holds unrenewed, the wait of a replacement after the leader dies; 0: 15s")
	fs.Func("watch-namespaces", "comma-separated namespaces to confine the operator to (Roles there suffice); empty: all", func(v string) error {
		o.WatchNamespaces = splitNamespaces(v)
		return nil
	})
	fs.BoolVar(&o.AllowLocalTargets, "allow-local-targets", false,
		"let connection.servers of JetStream resources reach loopback, link-local and API server addresses (tests and development only)")
	fs.Func("connection-allowed-cidrs", "comma-separated CIDRs that connection.servers of JetStream resources may reach, the deny list still applying within; empty: any address not denied", func(v string) error {
		cidrs, err := splitCIDRs(v)
		o.ConnectionAllowedCIDRs = cidrs
		return err
	})
	fs.Func("connection-allowed-namespaces", "comma-separated namespaces whose JetStream resources may use spec.connection (connection.servers); empty: all", func(v string) error {
		o.ConnectionAllowedNamespaces = splitNamespaces(v)
		return nil
	})
	fs.BoolVar(&o.ConnectionAllowOtherNamespaces, "connection-allow-other-namespaces", false,
		"let connection.servers of JetStream resources reach the pods and Services of other namespaces than the resource's (refused by default: they are other tenants')")
	fs.Func("allowed-image-registries", "comma-separated registries or repositories (written as image names without tag, e.g. registry.example.com,docker.io/nats) that spec.image must be under; empty: any image", func(v string) error {
		o.AllowedImageRegistries = splitNamespaces(v)
		_, err := natscluster.ParseImagePolicy(o.AllowedImageRegistries)
		return err
	})
	fs.Func("allowed-cluster-issuers", "comma-separated ClusterIssuers (name, or group/name for an external issuer) that a NatsCluster's TLS may name; not given or empty: none (Issuers of the cluster's namespace are always allowed; a ClusterIssuer signs for every tenant that names it)", func(v string) error {
		o.AllowedClusterIssuers = splitNamespaces(v)
		_, err := natscluster.ParseIssuerPolicy(o.AllowedClusterIssuers)
		return err
	})
	fs.Func("allowed-ingress-hosts", "comma-separated hosts a NatsCluster's WebSocket Ingress may route: a name, or *.<domain> for one label under it; given empty: none; not given: any (admission already asks that whoever sets spec.websocket.ingress may create Ingresses)", func(v string) error {
		hosts := splitNamespaces(v)
		o.AllowedIngressHosts = &hosts
		_, err := natscluster.ParseIngressPolicy(&hosts, nil)
		return err
	})
	fs.Func("allowed-ingress-annotations", "comma-separated annotations a NatsCluster's WebSocket Ingress may carry: a key, or a prefix ending in * (nginx.ingress.kubernetes.io/proxy-*); not given or empty: none", func(v string) error {
		o.AllowedIngressAnnotations = splitNamespaces(v)
		_, err := natscluster.ParseIngressPolicy(nil, o.AllowedIngressAnnotations)
		return err
	})
	fs.StringVar(&o.WebhookBindAddress, "webhook-bind-address", "0", `address of the validating webhook (HTTPS, for the API server; the install sets :9443); "0" disables it`)
	fs.StringVar(&o.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "the operator's namespace, where the webhook's certificate is kept (POD_NAMESPACE)")
	fs.Func("webhook-cert-names", "comma-separated names the webhook's certificate is for; empty: "+webhook.ServiceName+".<namespace>.svc", func(v string) error {
		o.WebhookCertNames = splitNamespaces(v)
		return nil
	})
	config.RegisterFlags(fs) // --kubeconfig
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs) // --zap-log-level, --zap-devel, ...
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if len(o.WebhookCertNames) == 0 && o.Namespace != "" {
		o.WebhookCertNames = []string{webhook.ServiceName + "." + o.Namespace + ".svc"}
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("kubenats")

	cfg, err := config.GetConfig()
	if err != nil {
		fmt.Fprintf(stderr, "kubenats: %v\n", err)
		return 1
	}
	mgr, err := manager.New(cfg, o)
	if err != nil {
		log.Error(err, "building the manager")
		return 1
	}
	log.Info("starting", "version", version)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "manager stopped")
		return 1
	}
	return 0
}

// splitNamespaces reads a comma-separated list (namespaces, registries),
// ignoring blanks.
func splitNamespaces(v string) []string {
	var out []string
	for _, ns := range strings.Split(v, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

// splitCIDRs reads a comma-separated list of CIDRs, ignoring blanks and
// refusing anything else: a typo must not widen what may be dialled.
func splitCIDRs(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR", s)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// parseBytes reads a byte count written as a Kubernetes quantity (64Mi,
// 67108864), refusing anything else and a negative or fractional count.
func parseBytes(v string) (int64, error) {
	q, err := resource.ParseQuantity(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("%q is not a quantity of bytes (such as 64Mi): %w", v, err)
	}
	n, ok := q.AsInt64()
	if !ok || n < 0 {
		return 0, fmt.Errorf("%q is not a whole, positive number of bytes", v)
	}
	return n, nil
}
