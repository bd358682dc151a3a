// Package envtest_test runs the operator against a real kube-apiserver and
// etcd (built by hack/build-k8s-bins.sh into bin/k8s). There is no
// controller manager and no kubelet here: pods never run, so tests that need
// a StatefulSet's status write it themselves, as the StatefulSet controller
// would.
package envtest_test

import (
	"flag"
	"os"
	"strconv"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/inprocess"
)

var (
	// k8s talks to the API server directly, with no cache, as a user would.
	k8s client.Client
	cfg *rest.Config
	// operatorCfg is how the operator reaches the API server: as its
	// ServiceAccount.
	operatorCfg *rest.Config
)

// parallel is how many tests run at once unless -parallel says: the
// tests that call t.Parallel mostly wait (for the operator's passes, a
// window in which nothing may happen, a server's timeout), so more of them
// than the cores (-parallel's default, 2 on CI's machine) overlap their
// waits. Each has a namespace, NATS servers, ports and loopback addresses
// of its own; tests that change what every test shares (the webhook
// configuration, an admission binding, a second operator, the process'
// environment or metrics, every core) do not call t.Parallel, and run
// first, alone.
const parallel = 8

// TestMain runs the operator as its own ServiceAccount with the shipped
// RBAC and admission policies: a permission missing from config/rbac fails
// the tests that need it.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(parallel)); err != nil {
			panic(err)
		}
	}
	os.Exit(inprocess.RunEnvtest(m.Run, inprocess.EnvtestOptions{
		Operator: manager.Options{
			Dialer: jetstream.DialerFunc(testDialer),
			// connection.servers of the tests name nats-servers on 127.0.0.1.
			AllowLocalTargets: true,
			// natscluster_issuer_policy_test.go: one ClusterIssuer allowed.
			AllowedClusterIssuers: []string{allowedClusterIssuer},
			// natscluster_websocket_ingress_test.go: hosts under
			// example.com, nginx's proxy-* annotations.
			AllowedIngressHosts:       &[]string{allowedIngressHosts},
			AllowedIngressAnnotations: []string{allowedIngressAnnotations},
		},
		Ready: func(e *inprocess.Envtest) { k8s, cfg, operatorCfg = e.Client, e.Config, e.OperatorConfig },
	}))
}
