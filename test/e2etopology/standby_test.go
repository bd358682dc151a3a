package e2etopology_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/poll"
)

// TestStandbyInAnotherClusterIsPromoted is the standby of docs/backup.md
// end to end: a NatsCluster "standby" in its own namespace and JetStream
// domain dials the NatsCluster "primary" as a leafnode over TLS, and its
// Stream ORDERS_STANDBY mirrors primary's ORDERS through the primary
// domain's API prefix.
//
//   - Under acknowledged publishing into ORDERS, the mirror catches up: its
//     status.mirror says lag 0, and so does its server's metrics container
//     (nats_stream_mirror_lag with mirror_name ORDERS).
//   - The primary is lost (deleted with its data, its servers gone), and
//     the standby's status.mirror shows the contact growing older.
//   - The standby is promoted as `kubectl kubenats promote` does (mirror
//     removed, subjects given in the same update): it takes writes on
//     orders.>, numbered after the last mirrored message, and holds every
//     message the primary acknowledged, each at the sequence the primary
//     gave it.
//
// Careless variants run and seen failing: the mirror without the
// external API prefix (it looks for ORDERS in its own domain: the lag
// never reaches status and the catch-up times out); the promotion
// without the subjects (the write to orders.new finds no stream: "no
// response from stream" for 30 s).
func TestStandbyInAnotherClusterIsPromoted(t *testing.T) {
	t.Parallel()
	nsPrimary, nsStandby := e2ekit.Namespace(t), e2ekit.Namespace(t)

	// The leafnode listener's certificate, for the name the standby dials,
	// and the password both sides know, as opted-in Secrets of the user.
	primaryRef := e2ekit.NatsCluster(nsPrimary, "primary")
	hubName := primaryRef.PodDNSName(primaryRef.PodName(0))
	now := time.Now().Add(-time.Minute)
	ca, err := pki.NewCA("standby-test leafnode CA", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	userSecret(t, nsPrimary, "leaf-tls", issue(t, ca, []string{hubName}))
	userSecret(t, nsPrimary, "leaf-password", map[string]string{"password": "leafPassw0rd"})
	userSecret(t, nsStandby, "primary-leaf-user", map[string]string{"user": "leaf", "password": "leafPassw0rd"})
	userSecret(t, nsStandby, "primary-leaf-ca", map[string]string{render.TLSCAKey: ca.Cert})

	formingPrimary := e2ekit.StartClusterIn(t, nsPrimary, "primary", func(s *v1alpha1.NatsClusterSpec) {
		s.Replicas = ptr.To[int32](1)
		s.JetStream.Domain = "primary"
		s.Leafnodes = &v1alpha1.LeafnodesSpec{Accept: &v1alpha1.LeafnodeAcceptSpec{
			SecretRef: &v1alpha1.SecretKeyRef{Name: "leaf-password", Key: "password"},
			TLS:       &v1alpha1.ClientTLSSpec{SecretName: "leaf-tls"},
		}}
	})
	formingStandby := e2ekit.StartClusterIn(t, nsStandby, "standby", func(s *v1alpha1.NatsClusterSpec) {
		s.Replicas = ptr.To[int32](1)
		s.JetStream.Domain = "standby"
		s.Monitoring = &v1alpha1.MonitoringSpec{Enabled: true}
		s.Leafnodes = &v1alpha1.LeafnodesSpec{Remotes: []v1alpha1.LeafnodeRemote{{
			Name:          "primary",
			URLs:          []string{"tls://" + net.JoinHostPort(hubName, "7422")},
			UserSecretRef: &v1alpha1.LocalSecretRef{Name: "primary-leaf-user"},
			TLS:           &v1alpha1.LocalSecretRef{Name: "primary-leaf-ca"},
		}}}
	})
	primary, standby := formingPrimary.Ready(t), formingStandby.Ready(t)

	origin := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: nsPrimary, Name: "orders"},
		Spec: v1alpha1.StreamSpec{Target: v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Name: "primary"}},
			Name: "ORDERS", Subjects: []string{"orders.>"}, Replicas: 1, Storage: "file"}}
	mirror := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: nsStandby, Name: "orders-standby"},
		Spec: v1alpha1.StreamSpec{Target: v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Name: "standby"}},
			Name: "ORDERS_STANDBY", Replicas: 1, Storage: "file",
			Mirror: &v1alpha1.StreamSource{Name: "ORDERS", ExternalAPIPrefix: "$JS.primary.API"}}}
	for _, s := range []*v1alpha1.Stream{origin, mirror} {
		if err := e2ekit.Cluster.Client.Create(e2ekit.Ctx(t), s); err != nil {
			t.Fatal(err)
		}
		streamReady(t, s)
	}

	// Acknowledged publishing into the primary while the mirror follows.
	primaryJS := e2ekit.AppJetStream(t, e2ekit.AppConn(t, primary, "orders-writer", primary.Pods...))
	pub := e2ekit.StartPublisher(primaryJS, "orders.placed")
	e2ekit.Eventually(t, e2ekit.Wait, func() error {
		if n := pub.Count(); n < 300 {
			return fmt.Errorf("%d messages acknowledged so far", n)
		}
		return nil
	})
	pub.Halt()
	acked, _ := pub.Result()
	stored := e2ekit.StoredCount(t, primaryJS, "ORDERS", acked, nil)
	t.Logf("the primary acknowledged %d messages and holds %d", acked, stored)

	standbyJS := e2ekit.AppJetStream(t, e2ekit.AppConn(t, standby, "orders-reader", standby.Pods...))
	e2ekit.Eventually(t, 2*time.Minute, func() error {
		held, err := messagesIn(t, standbyJS, "ORDERS_STANDBY")
		if err != nil || held != uint64(stored) {
			return fmt.Errorf("the standby holds %d messages (%v), the primary %d", held, err, stored)
		}
		return nil
	})
	// The status is written at the mirror's next pass (every 30 s).
	e2ekit.Eventually(t, 2*time.Minute, func() error {
		st, err := mirrorStatus(t, mirror)
		if err != nil {
			return err
		}
		if st == nil || st.Lag != 0 || st.LastContact == "" {
			return fmt.Errorf("status.mirror %+v, want lag 0 with a last contact", st)
		}
		return nil
	})
	metricsAt := "http://" + net.JoinHostPort(standby.IP(standby.Pods[0]), strconv.Itoa(render.MetricsPort)) + "/metrics"
	e2ekit.Eventually(t, time.Minute, func() error {
		lag, err := mirrorLagSeries(e2ekit.Ctx(t), metricsAt, "ORDERS_STANDBY", "ORDERS")
		if err != nil {
			return err
		}
		if lag != 0 {
			return fmt.Errorf("nats_stream_mirror_lag is %v, want 0", lag)
		}
		return nil
	})

	// The primary is lost, data and all.
	lost := primary.Cluster.DeepCopy()
	e2ekit.Eventually(t, e2ekit.Wait, func() error {
		if err := e2ekit.Cluster.Client.Get(e2ekit.Ctx(t), client.ObjectKeyFromObject(lost), lost); err != nil {
			return err
		}
		lost.Annotations = map[string]string{plan.AnnotationDeleteWithData: "true"}
		return e2ekit.Cluster.Client.Update(e2ekit.Ctx(t), lost)
	})
	if err := e2ekit.Cluster.Client.Delete(e2ekit.Ctx(t), lost); err != nil {
		t.Fatal(err)
	}
	e2ekit.Eventually(t, 2*time.Minute, func() error {
		err := e2ekit.Cluster.Client.Get(e2ekit.Ctx(t), client.ObjectKeyFromObject(lost), &v1alpha1.NatsCluster{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the primary NatsCluster is still there (%v)", err)
		}
		err = e2ekit.Cluster.Client.Get(e2ekit.Ctx(t), client.ObjectKey{Namespace: nsPrimary, Name: primary.Pods[0]}, &corev1.Pod{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the primary's server pod is still there (%v)", err)
		}
		return nil
	})
	// The standby notices: the contact its status reports grows older.
	e2ekit.Eventually(t, 2*time.Minute, func() error {
		st, err := mirrorStatus(t, mirror)
		if err != nil || st == nil {
			return fmt.Errorf("status.mirror %+v (%v)", st, err)
		}
		ago, err := time.ParseDuration(st.LastContact)
		if err != nil || ago < 10*time.Second {
			return fmt.Errorf("the mirror last heard from its origin %q ago, want it to show the loss", st.LastContact)
		}
		return nil
	})

	// Promotion, as kubectl kubenats promote orders-standby --subjects
	// 'orders.>' does it: one update that removes the mirror and gives the
	// stream its subjects.
	e2ekit.Eventually(t, e2ekit.Wait, func() error {
		got := &v1alpha1.Stream{}
		if err := e2ekit.Cluster.Client.Get(e2ekit.Ctx(t), client.ObjectKeyFromObject(mirror), got); err != nil {
			return err
		}
		got.Spec.Mirror, got.Spec.Subjects = nil, []string{"orders.>"}
		return e2ekit.Cluster.Client.Update(e2ekit.Ctx(t), got)
	})
	e2ekit.Eventually(t, time.Minute, func() error {
		st, err := mirrorStatus(t, mirror)
		if err != nil {
			return err
		}
		if st != nil {
			return fmt.Errorf("the promoted stream still reports a mirror: %+v", st)
		}
		return nil
	})
	streamReady(t, mirror)

	// It takes writes, numbered after what it mirrored.
	var ack *natsjs.PubAck
	e2ekit.Eventually(t, e2ekit.Wait, func() error {
		ack, err = standbyJS.Publish(e2ekit.Ctx(t), "orders.new", []byte("after the promotion"))
		return err
	})
	if ack.Stream != "ORDERS_STANDBY" || ack.Sequence != uint64(stored)+1 {
		t.Fatalf("the write after the promotion was acknowledged by %s at %d, want ORDERS_STANDBY at %d", ack.Stream, ack.Sequence, stored+1)
	}

	// Every message the primary acknowledged, at the primary's sequence
	// (the publisher's IDs are 0, 1, 2, ... in the order it stored them).
	cons, err := standbyJS.OrderedConsumer(e2ekit.Ctx(t), "ORDERS_STANDBY", natsjs.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	seen := make(map[int]bool, stored)
	for n := 0; n < stored; n++ {
		m, err := cons.Next(natsjs.FetchMaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("read %d of %d messages, then: %v", n, stored, err)
		}
		meta, err := m.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		id, err := strconv.Atoi(m.Headers().Get(nats.MsgIdHdr))
		if err != nil || meta.Sequence.Stream != uint64(id)+1 {
			t.Fatalf("message with ID %q at sequence %d, want ID sequence-1", m.Headers().Get(nats.MsgIdHdr), meta.Sequence.Stream)
		}
		seen[id] = true
	}
	for id := range acked {
		if !seen[id] {
			t.Fatalf("acknowledged message %d is not in the promoted standby", id)
		}
	}
	// It no longer follows anything: no mirror on the server over a window.
	poll.Holds(t, 3*time.Second, func() error {
		s, err := standbyJS.Stream(e2ekit.Ctx(t), "ORDERS_STANDBY")
		if err != nil {
			return err
		}
		if info := s.CachedInfo(); info.Config.Mirror != nil || info.Mirror != nil {
			return fmt.Errorf("the server's stream still mirrors: %+v", info.Config.Mirror)
		}
		return nil
	})
}

// streamReady waits for s to report Ready, Synced.
func streamReady(t *testing.T, s *v1alpha1.Stream) {
	t.Helper()
	e2ekit.Eventually(t, time.Minute, func() error {
		got := &v1alpha1.Stream{}
		if err := e2ekit.Cluster.Client.Get(e2ekit.Ctx(t), client.ObjectKeyFromObject(s), got); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady)
		if ready == nil || ready.Status != metav1.ConditionTrue || got.Status.ObservedGeneration != got.Generation {
			return fmt.Errorf("%s: Ready %+v at generation %d", s.Name, ready, got.Generation)
		}
		return nil
	})
}

func mirrorStatus(t *testing.T, s *v1alpha1.Stream) (*v1alpha1.MirrorStatus, error) {
	got := &v1alpha1.Stream{}
	if err := e2ekit.Cluster.Client.Get(e2ekit.Ctx(t), client.ObjectKeyFromObject(s), got); err != nil {
		return nil, err
	}
	return got.Status.Mirror, nil
}

func messagesIn(t *testing.T, js natsjs.JetStream, stream string) (uint64, error) {
	s, err := js.Stream(e2ekit.Ctx(t), stream)
	if err != nil {
		return 0, err
	}
	return s.CachedInfo().State.Msgs, nil
}

// mirrorLagSeries is the value of nats_stream_mirror_lag for stream
// mirroring origin, as the metrics container at url serves it, read with
// Prometheus' own parser of its text format.
func mirrorLagSeries(ctx context.Context, url, stream, origin string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return 0, err
	}
	for _, m := range families["nats_stream_mirror_lag"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["stream_name"] == stream && labels["mirror_name"] == origin {
			return m.GetGauge().GetValue(), nil
		}
	}
	return 0, errors.New("no nats_stream_mirror_lag series for " + stream)
}
