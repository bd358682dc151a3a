package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/admission"
	"github.com/kubenats/kubenats/test/loopback"
	"github.com/kubenats/kubenats/test/realnode"
)

// demoCluster is where the demo runs: the loopback cluster (the default),
// or a real node (NODE=real: kubelet, containerd, runc, CNI, kube-proxy
// and CoreDNS on this machine, the operator's image run from the shipped
// install).
type demoCluster struct {
	client client.Client
	config *rest.Config
	dir    string
	// dial reaches Service and pod names from this machine.
	dial func(network, addr string) (net.Conn, error)
	// podIP is the address of pod ns/name, "" when it has none.
	podIP func(ctx context.Context, ns, name string) string
	// where says, for a person, how the servers are reached from here.
	where string
	stop  func()
}

// loopbackCluster starts the loopback cluster and the operator in this
// process.
func loopbackCluster(ctx context.Context) (*demoCluster, error) {
	say("starting the loopback cluster (kube-apiserver, etcd, kube-controller-manager, loopback kubelet)")
	lc, err := loopback.New(loopback.Options{Scheme: manager.Scheme()})
	if err != nil {
		return nil, err
	}
	stopAll := func() {
		say("stopping everything (servers, control plane)")
		lc.Stop()
	}
	if err := admission.Install(ctx, lc.Client, lc.RepoRoot()); err != nil {
		stopAll()
		return nil, err
	}
	stopOperator, err := startOperator(ctx, lc)
	if err != nil {
		stopAll()
		return nil, err
	}
	return &demoCluster{
		client: lc.Client, config: lc.Config, dir: lc.Dir, dial: lc.Dial,
		podIP: func(_ context.Context, ns, name string) string { return lc.PodIP(ns, name) },
		where: "each server listens on its own loopback address",
		stop:  func() { stopOperator(); stopAll() },
	}, nil
}

// realNodeCluster starts a real node and applies dist/install.yaml to it:
// the operator runs from its image, as on any cluster.
func realNodeCluster(ctx context.Context) (*demoCluster, error) {
	if why := realnode.Unusable(); why != "" {
		return nil, fmt.Errorf("NODE=real: %s", why)
	}
	root, err := realnode.RepoRoot()
	if err != nil {
		return nil, err
	}
	scheme := manager.Scheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	say("starting a real node (kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kubelet, containerd, kube-proxy, CoreDNS)")
	began := time.Now()
	n, err := realnode.New(ctx, realnode.Options{RepoRoot: root, Scheme: scheme, Volumes: 6})
	if err != nil {
		return nil, err
	}
	say("node up in %s", time.Since(began).Round(100*time.Millisecond))
	stop := func() {
		say("stopping everything (pods, node, control plane)")
		n.Stop()
	}
	began = time.Now()
	if err := realnode.ApplyInstall(ctx, n.Client, filepath.Join(root, "dist", "install.yaml")); err != nil {
		stop()
		return nil, err
	}
	if err := operatorReady(ctx, n.Client); err != nil {
		stop()
		return nil, err
	}
	say("dist/install.yaml applied, the operator's pod Ready in %s (its log: kubectl logs -n kubenats-system deploy/kubenats)", time.Since(began).Round(100*time.Millisecond))
	dialer := &net.Dialer{Timeout: 5 * time.Second, Resolver: realnode.Resolver()}
	return &demoCluster{
		client: n.Client, config: n.Config, dir: n.Dir,
		dial: func(network, addr string) (net.Conn, error) {
			// A Service's name in an application's URL (name.ns.svc) is
			// completed by the pod's search list; here, by hand.
			if host, port, err := net.SplitHostPort(addr); err == nil && strings.HasSuffix(host, ".svc") {
				addr = net.JoinHostPort(host+".cluster.local", port)
			}
			return dialer.Dial(network, addr)
		},
		podIP: func(ctx context.Context, ns, name string) string {
			var p corev1.Pod
			if err := n.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
				return ""
			}
			return p.Status.PodIP
		},
		where: "each server listens on its pod's address, on the node's bridge",
		stop:  stop,
	}, nil
}

// operatorReady waits for the install's operator pod to be Ready.
func operatorReady(ctx context.Context, c client.Client) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for {
		var pods corev1.PodList
		err := c.List(ctx, &pods, client.InNamespace("kubenats-system"), client.MatchingLabels{"app.kubernetes.io/name": "kubenats"})
		if err == nil {
			for _, p := range pods.Items {
				for _, cond := range p.Status.Conditions {
					if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
						return nil
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the operator's pod is not Ready after 3 minutes (%v)", err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// onRealNode says whether the demo was asked for the real node.
func onRealNode() bool { return os.Getenv("DEMO_NODE") == "real" }
