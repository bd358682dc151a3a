package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/loopback"
)

// olderServerVersion is the version the rolled NatsCluster starts at; it
// is rolled to v1alpha1.DefaultVersion.
const olderServerVersion = "2.14.10"

const (
	// rollTimeout bounds the roll: three servers, each drained in lame
	// duck mode before it is replaced.
	rollTimeout = 10 * time.Minute
	// rollSetup bounds each step around the roll (credentials, stream,
	// the first acknowledgements).
	rollSetup = 30 * time.Second
	// publishTimeout is how long the publisher waits for one
	// acknowledgement before it sends the message again (same ID): an
	// acknowledgement lost with a server that went away costs this much.
	publishTimeout = 2 * time.Second
)

// rollResult is what a client saw while a NatsCluster was rolled.
type rollResult struct {
	// stall is the longest time between two acknowledged publishes in the
	// roll, from its start to the first acknowledgement after it ended.
	stall time.Duration
	// took is from the version change to status serverVersion Observed at
	// the new version with Ready True.
	took            time.Duration
	ackedDuringRoll int
}

// measureRollStall forms a NatsCluster at olderServerVersion, publishes to
// an R3 stream with message IDs (each retried until acknowledged), changes
// the version to the default one and waits for the roll to end.
func measureRollStall(b testing.TB, lc *loopback.Cluster) rollResult {
	b.Helper()
	f := formNatsCluster(b, lc, "bench-roll", olderServerVersion)
	f.log(b)
	nc := f.cluster
	js := rollClient(b, lc, nc)
	stream := createRollStream(b, js)

	pub := &ackedPublisher{js: js, stop: make(chan struct{}), done: make(chan struct{}), errs: map[string]int{}}
	go pub.run()
	b.Cleanup(pub.halt)
	pub.waitFor(b, "100 acknowledged publishes before the roll", func(acks []time.Time) bool { return len(acks) >= 100 })

	rollStart := time.Now()
	setServerVersion(b, lc, nc, v1alpha1.DefaultVersion)
	waitRolled(b, lc, nc, v1alpha1.DefaultVersion)
	rollEnd := time.Now()
	// A stall under way when the roll ended counts in full.
	pub.waitFor(b, "an acknowledged publish after the roll", func(acks []time.Time) bool {
		return len(acks) > 0 && acks[len(acks)-1].After(rollEnd)
	})
	pub.halt()

	res := rollResult{took: rollEnd.Sub(rollStart)}
	type gap struct{ from, length time.Duration }
	var gaps []gap
	prev := rollStart
	for _, at := range pub.acks {
		if !at.After(rollStart) {
			continue
		}
		gaps = append(gaps, gap{prev.Sub(rollStart), at.Sub(prev)})
		prev = at
		res.ackedDuringRoll++
		if at.After(rollEnd) {
			break
		}
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i].length > gaps[j].length })
	var worst []string
	for _, g := range gaps[:min(3, len(gaps))] {
		worst = append(worst, fmt.Sprintf("%.3fs from %.1fs", g.length.Seconds(), g.from.Seconds()))
	}
	if len(gaps) > 0 {
		res.stall = gaps[0].length
	}
	b.Logf("roll %s -> %s: %.1fs; %d publishes acknowledged in it, longest gaps between acknowledgements (since the roll began): %s; publishes retried (each after at most %s): %v",
		olderServerVersion, v1alpha1.DefaultVersion, res.took.Seconds(), res.ackedDuringRoll, strings.Join(worst, ", "), publishTimeout, pub.errs)

	ctx, cancel := context.WithTimeout(context.Background(), rollSetup)
	defer cancel()
	if info, err := stream.Info(ctx); err != nil {
		b.Logf("stream info after the roll: %v", err)
	} else {
		b.Logf("stream %s holds %d messages; %d publishes were acknowledged in all", info.Config.Name, info.State.Msgs, len(pub.acks))
	}
	return res
}

// rollClient connects to the NatsCluster's servers at their addresses
// with the credentials of its <name>-client Secret, reconnecting forever.
func rollClient(b testing.TB, lc *loopback.Cluster, nc *v1alpha1.NatsCluster) natsjs.JetStream {
	b.Helper()
	ctx := context.Background()
	var secret corev1.Secret
	benchEventually(b, rollSetup, func() error {
		if err := lc.Client.Get(ctx, client.ObjectKeyFromObject(nc), nc); err != nil {
			return err
		}
		if nc.Status.CredentialsSecretRef == nil {
			return fmt.Errorf("status.credentialsSecretRef is not set")
		}
		return lc.Client.Get(ctx, client.ObjectKey{Namespace: nc.Namespace, Name: nc.Status.CredentialsSecretRef.Name}, &secret)
	})
	// By DNS name: a replaced server comes back at another address.
	var urls []string
	for i := range int(nc.Spec.ReplicaCount()) {
		urls = append(urls, "tls://"+net.JoinHostPort(nc.PodDNSName(nc.PodName(i)), strconv.Itoa(render.ClientPort)))
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secret.Data[render.TLSCAKey]) {
		b.Fatal("the credentials Secret has no usable ca.crt")
	}
	conn, err := nats.Connect(strings.Join(urls, ","), nats.SetCustomDialer(jetstream.DialerFunc(lc.Dial)),
		nats.Secure(&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}),
		nats.UserInfo(string(secret.Data[render.CredentialsUserKey]), string(secret.Data[render.CredentialsPasswordKey])),
		nats.Name("kubenats-bench-roll"), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(conn.Close)
	js, err := natsjs.New(conn)
	if err != nil {
		b.Fatal(err)
	}
	return js
}

// createRollStream makes the R3 stream the publisher writes to.
func createRollStream(b testing.TB, js natsjs.JetStream) natsjs.Stream {
	b.Helper()
	var stream natsjs.Stream
	benchEventually(b, rollSetup, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s, err := js.CreateStream(ctx, natsjs.StreamConfig{Name: "ROLL", Subjects: []string{"roll.>"}, Replicas: 3})
		stream = s
		return err
	})
	return stream
}

// setServerVersion changes spec.version, retrying conflicts.
func setServerVersion(b testing.TB, lc *loopback.Cluster, nc *v1alpha1.NatsCluster, version string) {
	b.Helper()
	ctx := context.Background()
	benchEventually(b, rollSetup, func() error {
		if err := lc.Client.Get(ctx, client.ObjectKeyFromObject(nc), nc); err != nil {
			return err
		}
		nc.Spec.Version = version
		return lc.Client.Update(ctx, nc)
	})
}

// waitRolled waits until the NatsCluster's status describes its spec, is
// Ready with every server ready, and says the servers were observed
// running version, and every server's /varz agrees.
func waitRolled(b testing.TB, lc *loopback.Cluster, nc *v1alpha1.NatsCluster, version string) {
	b.Helper()
	ctx := context.Background()
	hc := &http.Client{Timeout: 2 * time.Second}
	benchEventually(b, rollTimeout, func() error {
		if err := lc.Client.Get(ctx, client.ObjectKeyFromObject(nc), nc); err != nil {
			return err
		}
		st := nc.Status
		if st.ObservedGeneration != nc.Generation || !meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionReady) ||
			st.ReadyReplicas != nc.Spec.ReplicaCount() || st.ServerVersion != version || st.ServerVersionSource != v1alpha1.VersionObserved {
			return fmt.Errorf("generation %d observed %d, %d/%d ready, version %s (%s), Ready %+v", nc.Generation, st.ObservedGeneration,
				st.ReadyReplicas, nc.Spec.ReplicaCount(), st.ServerVersion, st.ServerVersionSource, meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady))
		}
		for i := range int(nc.Spec.ReplicaCount()) {
			pod := nc.PodName(i)
			got, err := serverVersionAt(hc, lc.PodIP(nc.Namespace, pod))
			if err != nil || got != version {
				return fmt.Errorf("%s runs %q (%v)", pod, got, err)
			}
		}
		return nil
	})
}

// serverVersionAt is the version the server at ip reports on /varz.
func serverVersionAt(hc *http.Client, ip string) (string, error) {
	var v struct {
		Version string `json:"version"`
	}
	err := monitorGet(hc, ip, "/varz", &v)
	return v.Version, err
}

// ackedPublisher publishes with message IDs until halted, retrying each ID
// until the stream acknowledges it, and records when each was
// acknowledged.
type ackedPublisher struct {
	js       natsjs.JetStream
	stop     chan struct{}
	done     chan struct{}
	haltOnce sync.Once

	mu   sync.Mutex
	acks []time.Time
	errs map[string]int // why publishes were retried, and how often
}

func (p *ackedPublisher) run() {
	defer close(p.done)
	for id := 0; ; id++ {
		msgID := strconv.Itoa(id)
		for {
			select {
			case <-p.stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
			_, err := p.js.Publish(ctx, "roll.msg", []byte(msgID), natsjs.WithMsgID(msgID))
			cancel()
			if err == nil {
				break
			}
			p.mu.Lock()
			p.errs[err.Error()]++
			p.mu.Unlock()
			time.Sleep(20 * time.Millisecond) // a server is restarting: try again
		}
		now := time.Now()
		p.mu.Lock()
		p.acks = append(p.acks, now)
		p.mu.Unlock()
	}
}

// waitFor waits until the acknowledgements so far satisfy ok.
func (p *ackedPublisher) waitFor(b testing.TB, what string, ok func(acks []time.Time) bool) {
	b.Helper()
	benchEventually(b, rollSetup, func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		if !ok(p.acks) {
			return fmt.Errorf("waiting for %s: %d acknowledged so far, retries %v", what, len(p.acks), p.errs)
		}
		return nil
	})
}

// halt stops the publisher and waits for it; safe to call more than once.
// Afterwards acks and errs are the publisher's final record.
func (p *ackedPublisher) halt() {
	p.haltOnce.Do(func() {
		close(p.stop)
		<-p.done
	})
}

// benchEventually polls check every 100 ms until it returns nil, failing
// the benchmark with the last error once timeout has passed.
func benchEventually(b testing.TB, timeout time.Duration, check func() error) {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("not within %s: %v", timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
