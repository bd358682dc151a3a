package e2ekit

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"go.uber.org/zap/zapcore"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/admission"
	"github.com/kubenats/kubenats/test/inprocess"
	"github.com/kubenats/kubenats/test/loopback"
	"github.com/kubenats/kubenats/test/rbac"
)

// Options are what a suite's cluster and operator have beyond the
// defaults.
type Options struct {
	// CertManager and Istio run those add-ons' real controllers (and
	// Istio's injector, which selects only pods labelled for injection).
	CertManager, Istio bool
	// Prometheus builds the Prometheus the suite's tests run.
	Prometheus bool
	// Operator edits the suite operator's options (the dialer is set).
	Operator func(*manager.Options)
	// OperatorMetrics serves the operator's metrics on a loopback port
	// (OperatorMetricsAddress), over HTTPS behind the API server's
	// authentication and authorization, as the shipped install serves
	// them.
	OperatorMetrics bool
	// Started is called with the cluster once it runs, before any test.
	Started func(*loopback.Cluster)
	// Parallel is how many of the suite's parallel tests (e2ekit.Parallel)
	// run at once, longest first, when -parallel is not given (zero: Go's
	// default, GOMAXPROCS, in Go's order). Those tests mostly wait (for a
	// peer's rejoin window, a store to fill, a rollback), so more of them
	// than cores keeps the suite short.
	Parallel int
	// Zones make the loopback cluster one node per zone (loopback.Options).
	Zones []string
}

// Cluster is the loopback cluster of the suite that runs.
var Cluster *loopback.Cluster

// Leaks watches the whole suite for secrets where they must not be.
var Leaks *LeakScanner

// operatorLog is where the operator's (and envtest's) log lines go.
var operatorLog = &inprocess.SwitchWriter{}

// stopOperator stops the operator that runs now.
var stopOperator func() error

// Run starts the suite's cluster and operator, runs its tests, stops both
// and reports leaked secrets; its result is the suite's exit code.
func Run(m *testing.M, opts Options) int {
	if opts.Parallel > 0 {
		scheduleParallel(opts.Parallel)
	}
	// The logger is set before anything logs (envtest does at start); its
	// file exists only once the cluster's directory does.
	logf.SetLogger(zap.New(zap.WriteTo(operatorLog), zap.Level(logLevel())))
	// The metrics containers run the exporter of the code under test.
	binDir, err := os.MkdirTemp("", "kubenats-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(binDir)
	cluster, err := startCluster(opts, binDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	Cluster = cluster
	if opts.Started != nil {
		opts.Started(cluster)
	}
	code := 1
	defer func() {
		cluster.Stop()
		if code == 0 && os.Getenv("KUBENATS_KEEP_LOOPBACK") == "" {
			_ = os.RemoveAll(cluster.Dir)
		} else {
			fmt.Fprintf(os.Stderr, "loopback cluster logs kept in %s\n", cluster.Dir)
		}
	}()
	// The admission policies ship with the CRDs: the scenarios run with them.
	if err := admission.Install(context.Background(), cluster.Client, cluster.RepoRoot()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The operator runs as its own ServiceAccount with the shipped RBAC.
	if err := rbac.Install(context.Background(), cluster.Client, cluster.RepoRoot()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if Leaks, err = startLeakScanner(cluster.Config); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	operatorOptions = opts.Operator
	if opts.OperatorMetrics {
		if OperatorMetricsAddress, err = freeLoopbackAddress(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if err := StartOperator(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code = m.Run()
	if err := StopOperator(); err != nil {
		fmt.Fprintln(os.Stderr, "operator:", err)
		code = 1
	}
	// Every password, token and private key the suite made, looked for in
	// everything it saw and in the logs.
	logDir := filepath.Join(cluster.Dir, "logs")
	if found := Leaks.Report(logDir); found != "" {
		fmt.Fprintln(os.Stderr, "secrets leaked:\n"+found)
		code = 1
	} else {
		secrets, texts := Leaks.Counts()
		fmt.Fprintf(os.Stderr, "leak scan: none of %d secret values in %d ConfigMaps, specs, labels, annotations, statuses and events, or %d logs\n", secrets, texts, LogTexts(logDir))
	}
	return code
}

// startCluster builds what the cluster runs and starts it.
func startCluster(opts Options, binDir string) (*loopback.Cluster, error) {
	// The kubelet runs the nats-server the image names; the scripts skip
	// what is already built.
	if err := loopback.BuildNatsServers("", os.Stderr); err != nil {
		return nil, err
	}
	if opts.CertManager {
		if err := loopback.BuildCertManager("", os.Stderr); err != nil {
			return nil, err
		}
	}
	if opts.Istio {
		if err := loopback.BuildIstio("", os.Stderr); err != nil {
			return nil, err
		}
	}
	if opts.Prometheus {
		if err := loopback.BuildPrometheus("", os.Stderr); err != nil {
			return nil, err
		}
	}
	kubenatsBinary, err := loopback.BuildKubenats("", binDir, os.Stderr)
	if err != nil {
		return nil, err
	}
	return loopback.New(loopback.Options{Scheme: manager.Scheme(), KeepDir: true, CertManager: opts.CertManager, Istio: opts.Istio,
		KubenatsBinary: kubenatsBinary, Zones: opts.Zones})
}

// OperatorMetricsAddress is where the operator serves its metrics, with
// Options.OperatorMetrics; empty otherwise.
var OperatorMetricsAddress string

// freeLoopbackAddress is a port on 127.0.0.1 free now, which the operator
// binds a moment later (a port taken in between fails the suite's start
// loudly, never a test quietly).
func freeLoopbackAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// operatorOptions edits the operator's options at each start.
var operatorOptions func(*manager.Options)

// StartOperator runs the operator in this process, logging into the
// cluster's directory (appending: a restarted operator's lines follow its
// predecessor's). Its NATS connections resolve cluster DNS names through
// the loopback cluster. It returns once the caches are warm: tests time
// how fast a cluster forms.
func StartOperator() error {
	logFile, err := os.OpenFile(filepath.Join(Cluster.Dir, "logs", "operator.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	operatorLog.Set(logFile)
	// With Istio, the operator is in the mesh, as config/istio installs
	// it: its connections leave as its sidecar would send them, mTLS with
	// its identity to servers that have a sidecar, plain TCP to the
	// others. Without, it dials as any pod.
	dial := Cluster.Dial
	if Cluster.Mesh != nil {
		if dial, err = Cluster.MeshDialer(rbac.Namespace, rbac.ServiceAccount); err != nil {
			_ = logFile.Close()
			return err
		}
	}
	opts := manager.Options{Dialer: jetstream.DialerFunc(dial), MetricsBindAddress: OperatorMetricsAddress}
	if operatorOptions != nil {
		operatorOptions(&opts)
	}
	stop, err := inprocess.OperatorWith(context.Background(), rbac.Config(Cluster.Config), opts)
	if err != nil {
		_ = logFile.Close()
		return err
	}
	stopOperator = func() error {
		err := stop()
		operatorLog.Set(io.Discard)
		_ = logFile.Close()
		return err
	}
	return nil
}

// StopOperator stops the operator that runs now; stopping one that is
// stopped does nothing.
func StopOperator() error {
	stop := stopOperator
	stopOperator = func() error { return nil }
	if stop == nil {
		return nil
	}
	return stop()
}

// logLevel: info, or debug with KUBENATS_TEST_LOG set.
func logLevel() zapcore.Level {
	if os.Getenv("KUBENATS_TEST_LOG") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.InfoLevel
}

// scheduleParallel runs n parallel tests at once, longest first (Parallel),
// unless the command line gave -parallel, which then rules alone.
func scheduleParallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given {
		return
	}
	// Every parallel test must get past go test's own limit to reach the
	// scheduler, which waits for all of them before choosing.
	_ = flag.Set("test.parallel", strconv.Itoa(maxParallelTests))
	slots.schedule(n)
}

// maxParallelTests is more than a suite's parallel tests and subtests.
const maxParallelTests = 256
