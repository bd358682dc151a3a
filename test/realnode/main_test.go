package realnode_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/realnode"
)

// The suite shares one node, with the install applied once; each test
// works in namespaces of its own.
var (
	node *realnode.Node
	// unusable is why this machine cannot run the node: the tests skip
	// with it. Only a machine without root or cgroups skips; a missing
	// binary fails.
	unusable string
	scheme   = runtime.NewScheme()
)

const (
	operatorNamespace = "kubenats-system"
	operatorName      = "kubenats"
)

func TestMain(m *testing.M) {
	if unusable = realnode.Unusable(); unusable != "" {
		os.Exit(m.Run())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrllog.SetLogger(logr.Discard())
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	root, err := realnode.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The images, as `make node-images` writes them: the operator's from
	// this tree, the NATS images from the static servers of test-bins.
	began := time.Now()
	build := exec.Command("make", "--no-print-directory", "-C", root, "node-images")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "make node-images:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "realnode: images built in %s\n", time.Since(began).Round(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	began = time.Now()
	// Volumes: a local volume is Retained, so each serves one claim for
	// the whole run; the tests' claims add up to about 30 (13 clusters of
	// 1 or 3 servers, and the backups' claims), with room for more.
	node, err = realnode.New(ctx, realnode.Options{RepoRoot: root, Scheme: scheme, Volumes: 40})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer node.Stop()
	fmt.Fprintf(os.Stderr, "realnode: node up in %s: %v\n", time.Since(began).Round(time.Millisecond), node.BringUp)
	began = time.Now()
	if err := realnode.ApplyInstall(ctx, node.Client, filepath.Join(root, "dist", "install.yaml")); err != nil {
		fmt.Fprintln(os.Stderr, "applying dist/install.yaml:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "realnode: dist/install.yaml applied in %s\n", time.Since(began).Round(time.Millisecond))
	code := m.Run()
	if code != 0 {
		dumpLogs()
	}
	return code
}

func waitFor(ctx context.Context, timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// dumpLogs prints the ends of the node components' logs after a failure.
func dumpLogs() {
	for _, name := range []string{"node", "kubelet", "containerd", "kube-proxy", "kube-scheduler", "coredns", "kube-controller-manager"} {
		fmt.Fprintf(os.Stderr, "----- %s (last 40 lines)\n%s\n", name, e2ekit.LastLines(node.Log(name), 40))
	}
	d := &appsv1.Deployment{}
	_ = node.Client.Get(context.Background(), client.ObjectKey{Namespace: operatorNamespace, Name: operatorName}, d)
	fmt.Fprintf(os.Stderr, "----- operator Deployment status: %+v\n", d.Status)
}
