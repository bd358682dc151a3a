// Package e2e_test runs the operator against a loopback cluster
// (test/loopback): a real control plane with kube-controller-manager, and a
// kubelet of our own that runs each server as a real nats-server process on
// its own loopback address. A NatsCluster here forms a real JetStream
// cluster, on one machine, with no container runtime.
//
// The cluster's directory (kubelet, controller manager, operator and
// server logs) is kept when a test fails, or when KUBENATS_KEEP_LOOPBACK
// is set; KUBENATS_TEST_LOG=1 turns the operator's debug logs on.
//
// One cluster and one operator serve the whole package (controller-runtime
// allows one controller of a name per process); each test works in a
// namespace of its own.
//
// Most tests run one after another: they time stalls and restarts, and a
// test that restarts the operator must be alone. A few long ones that
// mostly wait (for nats-server's five minutes before a removed peer may
// rejoin, for a store to fill, for a broken mesh to be rolled back) call
// t.Parallel: Go runs them after the sequential ones, two at a time
// (-parallel defaults to GOMAXPROCS), so that the suite stays within its
// time budget.
package e2e_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// cluster is the loopback cluster every test uses.
var cluster *loopback.Cluster

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// The logger is set before anything logs (envtest does at start); its
	// file exists only once the cluster's directory does.
	logf.SetLogger(zap.New(zap.WriteTo(operatorLog), zap.Level(logLevel())))
	// The kubelet runs the nats-server the image names; the script skips
	// versions already built.
	if err := loopback.BuildNatsServers("", os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := loopback.BuildCertManager("", os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := loopback.BuildIstio("", os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := loopback.BuildPrometheus("", os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The metrics containers run the exporter of the code under test.
	binDir, err := os.MkdirTemp("", "kubenats-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(binDir)
	kubenatsBinary, err := loopback.BuildKubenats("", binDir, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Istio's injector selects only pods labelled for injection: the
	// scenarios without the mesh run as they would without Istio.
	cluster, err = loopback.New(loopback.Options{Scheme: manager.Scheme(), KeepDir: true, CertManager: true, Istio: true,
		KubenatsBinary: kubenatsBinary})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
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
	leaks, err = startLeakScanner(cluster.Config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if stopOperator, err = startOperator(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code = m.Run()
	if err := stopOperator(); err != nil {
		fmt.Fprintln(os.Stderr, "operator:", err)
		code = 1
	}
	// Every password, token and private key the suite made, looked for in
	// everything it saw and in the logs.
	logDir := filepath.Join(cluster.Dir, "logs")
	if found := leaks.report(logDir); found != "" {
		fmt.Fprintln(os.Stderr, "secrets leaked:\n"+found)
		code = 1
	} else {
		secrets, texts := leaks.counts()
		fmt.Fprintf(os.Stderr, "leak scan: none of %d secret values in %d ConfigMaps, specs, labels, annotations, statuses and events, or %d logs\n", secrets, texts, logTexts(logDir))
	}
	return code
}

// stopOperator stops the operator that runs now (restartOperator replaces it).
var stopOperator func() error

// startOperator runs the operator in this process, logging into the
// cluster's directory (appending: a restarted operator's lines follow its
// predecessor's). Its NATS connections resolve cluster DNS names through
// the loopback cluster.
func startOperator() (stop func() error, _ error) {
	logFile, err := os.OpenFile(filepath.Join(cluster.Dir, "logs", "operator.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	operatorLog.Set(logFile)
	// The operator is in the mesh, as config/istio installs it: its
	// connections leave as its sidecar would send them, mTLS with its
	// identity to servers that have a sidecar, plain TCP to the others.
	dial, err := cluster.MeshDialer(rbac.Namespace, rbac.ServiceAccount)
	if err != nil {
		return nil, err
	}
	// Tests time how fast a cluster forms: Operator returns once the
	// caches are warm.
	stopOperator, err := inprocess.OperatorWith(context.Background(), rbac.Config(cluster.Config), manager.Options{
		Dialer: jetstream.DialerFunc(dial), MeshRollbackAfter: meshRollbackAfter, MeshPushAllowance: meshPushAllowance})
	if err != nil {
		return nil, err
	}
	return func() error {
		err := stopOperator()
		operatorLog.Set(io.Discard)
		_ = logFile.Close()
		return err
	}, nil
}

// leaks watches the whole suite for secrets where they must not be.
var leaks *leakScanner

// operatorLog is where the operator's (and envtest's) log lines go.
var operatorLog = &inprocess.SwitchWriter{}

// logLevel: info, or debug with KUBENATS_TEST_LOG set.
func logLevel() zapcore.Level {
	if os.Getenv("KUBENATS_TEST_LOG") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.InfoLevel
}
