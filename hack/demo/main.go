// Command demo runs kubenats on this machine, no container runtime needed:
// a loopback cluster (test/loopback: a real control plane, and a kubelet of
// its own that runs each pod's server as a real nats-server process on its
// own 127.0.x.y address), the operator, and the samples: a 3-server
// NatsCluster, a Stream and a Consumer. It shows their status until they
// are Ready, sends messages through them, prints how to connect, and stays
// up until Ctrl-C (DEMO_EXIT=1: exits after the round trip).
//
// Run it through hack/demo.sh (`make demo`), which builds what it needs.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/admission"
	"github.com/kubenats/kubenats/test/loopback"
)

// ns is where the samples go: the kubeconfig's default, as with kubectl.
const ns = "default"

// Samples, relative to the repository root (hack/demo.sh runs from there).
const (
	clusterSample  = "config/samples/natscluster-production.yaml"
	streamSample   = "config/samples/jetstream/stream.yaml"
	consumerSample = "config/samples/jetstream/consumer.yaml"
)

// readyTimeout bounds the wait for everything to be Ready.
const readyTimeout = 5 * time.Minute

// roundTripCount is how many messages the round trip sends.
const roundTripCount = 100

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// envtest logs as it starts, before the cluster's directory exists.
	logf.SetLogger(zap.New(zap.WriteTo(operatorLog)))

	say("starting the loopback cluster (kube-apiserver, etcd, kube-controller-manager, loopback kubelet)")
	lc, err := loopback.New(loopback.Options{Scheme: manager.Scheme()})
	if err != nil {
		return err
	}
	defer func() {
		say("stopping everything (servers, control plane)")
		lc.Stop()
	}()
	if err := admission.Install(ctx, lc.Client, lc.RepoRoot()); err != nil {
		return err
	}
	stopOperator, err := startOperator(ctx, lc)
	if err != nil {
		return err
	}
	defer stopOperator()

	objs, err := samples()
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := lc.Client.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %s %s: %w", kindOf(o), o.GetName(), err)
		}
		say("created %s %s/%s", kindOf(o), ns, o.GetName())
	}
	if err := watchUntilReady(ctx, lc.Client); err != nil {
		return err
	}
	stream, consumer := objs[1].(*v1alpha1.Stream), objs[2].(*v1alpha1.Consumer)
	if err := roundTrip(ctx, lc, stream, consumer); err != nil {
		return err
	}
	kubeconfig := filepath.Join(lc.Dir, "kubeconfig")
	if err := writeKubeconfig(lc.Config, kubeconfig); err != nil {
		return err
	}
	if err := howToConnect(ctx, lc, objs[0].(*v1alpha1.NatsCluster), kubeconfig); err != nil {
		return err
	}
	if os.Getenv("DEMO_EXIT") == "1" {
		say("DEMO_EXIT=1: done")
		return nil
	}
	say("running until Ctrl-C")
	<-ctx.Done()
	return nil
}

// say prints one progress line.
func say(format string, args ...any) {
	fmt.Printf(">> "+format+"\n", args...)
}
