package loopback

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// The kubelet's own tests share one cluster, started by the first test
// that needs one (the unit tests need none), and stopped after all of
// them, when nothing it started may be left running. It runs Istio's
// injector: only pods labelled for injection are changed by it.
var shared struct {
	once    sync.Once
	cluster *Cluster
	err     error
}

func sharedCluster(t *testing.T) *Cluster {
	t.Helper()
	shared.once.Do(func() {
		if shared.err = BuildNatsServers("", os.Stderr); shared.err == nil {
			shared.cluster, shared.err = New(Options{Istio: true})
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.cluster
}

// bareAPIServer runs a kube-apiserver and etcd of bin/k8s for one test,
// with nothing else: no controllers, no kubelet, no CRDs.
func bareAPIServer(t *testing.T) *envtest.Environment {
	t.Helper()
	root, err := findRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{BinaryAssetsDirectory: filepath.Join(root, "bin", "k8s")}
	if _, err := env.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return env
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cluster != nil {
		dir := shared.cluster.Dir
		shared.cluster.Stop()
		if left, err := mountsUnder(dir); err != nil || len(left) > 0 {
			fmt.Fprintf(os.Stderr, "claims left mounted after Stop: %v (%v)\n", left, err)
			code = 1
		}
	}
	if left := childrenNamed("nats-server", "kube-controller-manager", "controller", "inject", "kube-apiserver", "etcd", "bash"); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "processes left running after Stop: %v\n", left)
		code = 1
	}
	os.Exit(code)
}
