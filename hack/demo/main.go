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
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/manager"
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
	if err := howToConnect(ctx, lc, objs[0].(*v1alpha1.NatsCluster), stream, kubeconfig); err != nil {
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

// startOperator runs the operator in this process, as the e2e tests do,
// its log in the cluster's directory. Its NATS connections resolve the
// cluster's Service names through the loopback cluster.
func startOperator(ctx context.Context, lc *loopback.Cluster) (stop func(), _ error) {
	logPath := filepath.Join(lc.Dir, "logs", "operator.log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	operatorLog.set(f)
	mgr, err := manager.New(lc.Config, manager.Options{
		MetricsBindAddress:     "0",
		HealthProbeBindAddress: "0",
		Dialer:                 jetstream.DialerFunc(lc.Dial),
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("the operator did not start: %v", <-done)
	}
	say("operator running (log: %s)", logPath)
	return func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "operator:", err)
		}
		operatorLog.set(io.Discard)
		_ = f.Close()
	}, nil
}

// operatorLog is where controller-runtime's log lines go: nowhere until
// the operator's log file exists.
var operatorLog = &switchWriter{w: io.Discard}

type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *switchWriter) set(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w = w
}

// samples reads the production NatsCluster sample, made small enough for
// one machine, and the Stream and Consumer samples, in that order.
func samples() ([]client.Object, error) {
	var c v1alpha1.NatsCluster
	var s v1alpha1.Stream
	var k v1alpha1.Consumer
	for path, into := range map[string]any{clusterSample: &c, streamSample: &s, consumerSample: &k} {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if err := yaml.UnmarshalStrict(data, into); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	// The production sample asks for 4Gi and a whole CPU per server, sized
	// for real traffic; three of those would not fit a laptop. Nothing else
	// changes.
	small := resource.MustParse("256Mi")
	c.Spec.Resources = &corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: small},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: small},
	}
	c.Spec.JetStream.MemoryStore = &v1alpha1.MemoryStoreSpec{Size: resource.MustParse("64Mi")}
	c.Spec.JetStream.FileStore.Size = ptrTo(resource.MustParse("1Gi"))
	say("%s: resources shrunk to 100m CPU, 256Mi memory, 64Mi memory store and 1Gi file store per server", clusterSample)
	out := []client.Object{&c, &s, &k}
	for _, o := range out {
		o.SetNamespace(ns)
	}
	return out, nil
}

func ptrTo[T any](v T) *T { return &v }

// kindOf is the kind of a typed object for messages.
func kindOf(o client.Object) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", o), "*v1alpha1.")
}

// watchUntilReady prints a kubectl-like table of the namespace whenever it
// changes, until the NatsCluster, the Stream and the Consumer are Ready.
func watchUntilReady(ctx context.Context, c client.Client) error {
	began := time.Now()
	deadline := began.Add(readyTimeout)
	last := ""
	for {
		text, ready, err := statusTable(ctx, c)
		if err != nil {
			return err
		}
		if text != last {
			fmt.Printf("\n--- %.1fs ---\n%s", time.Since(began).Seconds(), text)
			last = text
		}
		if ready {
			say("everything Ready after %.1fs", time.Since(began).Seconds())
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not Ready within %s (operator log in the cluster directory)", readyTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// statusTable is what `kubectl get natsclusters,pods,streams,consumers`
// shows, without the ages (so that it changes only when something
// happened), and whether everything is Ready.
func statusTable(ctx context.Context, c client.Client) (string, bool, error) {
	var clusters v1alpha1.NatsClusterList
	var pods corev1.PodList
	var streams v1alpha1.StreamList
	var consumers v1alpha1.ConsumerList
	for _, l := range []client.ObjectList{&clusters, &pods, &streams, &consumers} {
		if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
			return "", false, err
		}
	}
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 4, 3, ' ', 0)
	ready := len(clusters.Items) > 0 && len(streams.Items) > 0 && len(consumers.Items) > 0
	fmt.Fprintln(w, "NATSCLUSTER\tPHASE\tREADY\tREPLICAS\tVERSION\tENDPOINT")
	for _, nc := range clusters.Items {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\n", nc.Name, nc.Status.Phase, nc.Status.ReadyReplicas,
			nc.Spec.ReplicaCount(), nc.Status.ServerVersion, nc.Status.Endpoint.Internal)
		ready = ready && nc.Status.Phase == v1alpha1.PhaseReady && nc.Status.ObservedGeneration == nc.Generation
	}
	fmt.Fprintln(w, "\nPOD\tREADY\tSTATUS\tRESTARTS\tIP")
	for _, p := range pods.Items {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", p.Name, containersReady(&p), podStatus(&p), restarts(&p), p.Status.PodIP)
	}
	fmt.Fprintln(w, "\nSTREAM\tSERVER NAME\tREADY\tREASON")
	for _, s := range streams.Items {
		status, reason, ok := readyOf(s.Status.Conditions)
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Name, s.Spec.Name, status, reason)
		ready = ready && ok
	}
	fmt.Fprintln(w, "\nCONSUMER\tSTREAM\tDURABLE\tREADY\tREASON")
	for _, k := range consumers.Items {
		status, reason, ok := readyOf(k.Status.Conditions)
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", k.Name, k.Spec.StreamName, k.Spec.DurableName, status, reason)
		ready = ready && ok
	}
	if err := w.Flush(); err != nil {
		return "", false, err
	}
	return b.String(), ready, nil
}

// readyOf is the Ready condition's status and reason, and whether it is True.
func readyOf(conds []metav1.Condition) (status, reason string, ok bool) {
	c := meta.FindStatusCondition(conds, v1alpha1.ConditionReady)
	if c == nil {
		return "-", "-", false
	}
	return string(c.Status), c.Reason, c.Status == metav1.ConditionTrue
}

func containersReady(p *corev1.Pod) string {
	n := 0
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Ready {
			n++
		}
	}
	return fmt.Sprintf("%d/%d", n, len(p.Spec.Containers))
}

// podStatus is kubectl's STATUS column, roughly: Terminating, the reason a
// container waits, or the phase.
func podStatus(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "Terminating"
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Waiting != nil && cs.State.Waiting.Reason != "" {
			return cs.State.Waiting.Reason
		}
	}
	if p.Status.Phase == "" {
		return "Pending"
	}
	return string(p.Status.Phase)
}

func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, cs := range p.Status.ContainerStatuses {
		n += cs.RestartCount
	}
	return n
}

// clientSecret reads the NatsCluster's credentials Secret, as an
// application would.
func clientSecret(ctx context.Context, c client.Client, nc *v1alpha1.NatsCluster) (map[string]string, error) {
	var live v1alpha1.NatsCluster
	if err := c.Get(ctx, client.ObjectKeyFromObject(nc), &live); err != nil {
		return nil, err
	}
	if live.Status.CredentialsSecretRef == nil {
		return nil, errors.New("the NatsCluster names no credentials Secret in its status")
	}
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: live.Status.CredentialsSecretRef.Name}, &s); err != nil {
		return nil, err
	}
	out := map[string]string{"secret": s.Name}
	for k, v := range s.Data {
		out[k] = string(v)
	}
	return out, nil
}

// roundTrip connects as an application in the cluster would, with the
// ready-made URL of the credentials Secret (its Service name resolved by
// the loopback cluster), publishes with acks to the sample stream and
// consumes through the sample consumer, acking each message.
func roundTrip(ctx context.Context, lc *loopback.Cluster, s *v1alpha1.Stream, k *v1alpha1.Consumer) error {
	cred, err := clientSecret(ctx, lc.Client, &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: s.Spec.Cluster.Name}})
	if err != nil {
		return err
	}
	nc, err := nats.Connect(cred["url"], nats.SetCustomDialer(jetstream.DialerFunc(lc.Dial)), nats.Name("kubenats-demo"))
	if err != nil {
		return fmt.Errorf("connecting with the url of Secret %s: %w", cred["secret"], err)
	}
	defer nc.Close()
	js, err := natsjs.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	subject := strings.TrimSuffix(s.Spec.Subjects[0], ">") + "demo"
	began := time.Now()
	for i := range roundTripCount {
		if _, err := js.Publish(ctx, subject, fmt.Appendf(nil, "order %d", i)); err != nil {
			return fmt.Errorf("publishing: %w", err)
		}
	}
	published := time.Since(began)
	cons, err := js.Consumer(ctx, k.Spec.StreamName, k.Spec.DurableName)
	if err != nil {
		return err
	}
	got := 0
	for got < roundTripCount {
		batch, err := cons.Fetch(roundTripCount-got, natsjs.FetchMaxWait(5*time.Second))
		if err != nil {
			return err
		}
		for msg := range batch.Messages() {
			if err := msg.DoubleAck(ctx); err != nil {
				return fmt.Errorf("acking: %w", err)
			}
			got++
		}
		if err := batch.Error(); err != nil {
			return fmt.Errorf("fetching after %d messages: %w", got, err)
		}
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return err
	}
	say("round trip on %s (connected to %s): %d messages published with acks in %s to %s, consumed and acked through %s in %s; ack pending now %d",
		nc.ConnectedUrlRedacted(), nc.ConnectedServerName(), roundTripCount, published.Round(time.Millisecond),
		s.Spec.Name, k.Spec.DurableName, (time.Since(began) - published).Round(time.Millisecond), info.NumAckPending)
	return nil
}

// writeKubeconfig writes an admin kubeconfig for the loopback API server.
func writeKubeconfig(cfg *rest.Config, path string) error {
	ca, err := dataOrFile(cfg.CAData, cfg.CAFile)
	if err != nil {
		return err
	}
	cert, err := dataOrFile(cfg.CertData, cfg.CertFile)
	if err != nil {
		return err
	}
	key, err := dataOrFile(cfg.KeyData, cfg.KeyFile)
	if err != nil {
		return err
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["loopback"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: ca}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key, Token: cfg.BearerToken}
	kc.Contexts["loopback"] = &clientcmdapi.Context{Cluster: "loopback", AuthInfo: "admin", Namespace: ns}
	kc.CurrentContext = "loopback"
	return clientcmd.WriteToFile(*kc, path)
}

func dataOrFile(data []byte, file string) ([]byte, error) {
	if len(data) > 0 || file == "" {
		return data, nil
	}
	return os.ReadFile(file)
}

// howToConnect prints the servers' addresses, the credentials and the
// kubeconfig.
func howToConnect(ctx context.Context, lc *loopback.Cluster, nc *v1alpha1.NatsCluster, s *v1alpha1.Stream, kubeconfig string) error {
	cred, err := clientSecret(ctx, lc.Client, nc)
	if err != nil {
		return err
	}
	var urls []string
	for i := range nc.Spec.ReplicaCount() {
		urls = append(urls, "nats://"+net.JoinHostPort(lc.PodIP(ns, fmt.Sprintf("%s-%d", nc.Name, i)), "4222"))
	}
	first := strings.TrimPrefix(urls[0], "nats://")
	host, _, _ := net.SplitHostPort(first)
	fmt.Printf(`
Connect from this machine (each server listens on its own loopback address):
  servers:   %s
  user:      %s
  password:  %s
             (Secret %s/%s, keys user and password; key url is what applications in the cluster use:
              %s)
  e.g.       nats --server %s --user %s --password %s stream info %s
  monitor:   http://%s/varz  (also /jsz, /routez, /healthz)

The Kubernetes API (admin), for kubectl or any client:
  export KUBECONFIG=%s
  kubectl get natsclusters,streams,consumers,pods
  kubectl apply -f config/samples/natscluster-development.yaml
  (the file goes away with the demo)

`, strings.Join(urls, ","), cred["user"], cred["password"], ns, cred["secret"], redactURL(cred["url"]),
		urls[0], cred["user"], cred["password"], s.Spec.Name,
		net.JoinHostPort(host, "8222"), kubeconfig)
	return nil
}

// redactURL hides the password of a nats:// URL.
func redactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	userinfo, host, hasAt := strings.Cut(rest, "@")
	if !ok || !hasAt {
		return u
	}
	user, _, _ := strings.Cut(userinfo, ":")
	return scheme + "://" + user + ":***@" + host
}
