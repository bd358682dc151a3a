// Command demo runs kubenats on this machine, no container runtime needed:
// a loopback cluster (test/loopback: a real control plane, and a kubelet of
// its own that runs each pod's server as a real nats-server process on its
// own 127.0.x.y address), the operator, and the samples: a 3-server
// NatsCluster, a Stream and a Consumer. With DEMO_NODE=real (make demo
// NODE=real, as root) it runs on a real node instead (test/realnode), the
// operator from its image through dist/install.yaml. It shows their status until they
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

	start := loopbackCluster
	if onRealNode() {
		start = realNodeCluster
	}
	dc, err := start(ctx)
	if err != nil {
		return err
	}
	defer dc.stop()

	objs, err := samples()
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := dc.client.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %s %s: %w", kindOf(o), o.GetName(), err)
		}
		say("created %s %s/%s", kindOf(o), ns, o.GetName())
	}
	if err := watchUntilReady(ctx, dc.client); err != nil {
		return err
	}
	stream, consumer := objs[1].(*v1alpha1.Stream), objs[2].(*v1alpha1.Consumer)
	if err := roundTrip(ctx, dc, stream, consumer); err != nil {
		return err
	}
	kubeconfig := filepath.Join(dc.dir, "kubeconfig")
	if err := writeKubeconfig(dc.config, kubeconfig); err != nil {
		return err
	}
	if err := howToConnect(ctx, dc, objs[0].(*v1alpha1.NatsCluster), kubeconfig); err != nil {
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
