package loopback

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
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
		if shared.err = runBuild(BuildNatsServers); shared.err == nil {
			shared.cluster, shared.err = New(Options{Istio: true})
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.cluster
}

// builds runs the build scripts one at a time: tests run at once, and two
// runs of a script that has something to build (no bin/ yet) would write
// the same files under bin/ together.
var builds sync.Mutex

// runBuild runs a build script (BuildNatsServers, BuildCertManager) of the
// repository the tests run in, its progress to stderr.
func runBuild(script func(repoRoot string, out io.Writer) error) error {
	builds.Lock()
	defer builds.Unlock()
	return script("", os.Stderr)
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

// parallel is how many tests run at once unless -parallel says: the tests
// that call t.Parallel mostly wait (for a pod to turn ready, a grace
// period, a push, a certificate, a window in which nothing may happen), so
// more of them than the cores (-parallel's default, 2 on CI's machine)
// overlap their waits. Each has a namespace of the shared cluster, or a
// cluster, API server or mesh lab (and so a /24 of loopback addresses) of
// its own; a test that changes what every test of the shared cluster sees
// (a mesh-wide policy in Istio's root namespace) or the process'
// environment (t.Setenv) does not call t.Parallel, and runs first, alone.
const parallel = 8

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(parallel)); err != nil {
			panic(err)
		}
	}
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
