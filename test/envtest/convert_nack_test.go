package envtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/convert"
	"github.com/kubenats/kubenats/internal/manifest"
	"github.com/kubenats/kubenats/internal/metrics"
	"github.com/kubenats/kubenats/test/testnats"
	"github.com/kubenats/kubenats/test/upstream"
)

// nackManifests are what a NACK user applied for the stream and consumer
// below: an Account with the servers, a Stream and a Consumer naming it.
const nackManifests = `
apiVersion: jetstream.nats.io/v1beta2
kind: Account
metadata: {name: orders-account}
spec:
  servers: [%s]
---
apiVersion: jetstream.nats.io/v1beta2
kind: Stream
metadata: {name: orders}
spec:
  name: orders
  subjects: ["orders.*"]
  storage: file
  maxAge: 1h
  replicas: 1
  account: orders-account
---
apiVersion: jetstream.nats.io/v1beta2
kind: Consumer
metadata: {name: worker}
spec:
  streamName: orders
  durableName: worker
  deliverPolicy: all
  filterSubject: orders.received
  maxDeliver: 20
  ackPolicy: explicit
  account: orders-account
`

// TestMovingFromNACK is the README's runbook (docs/migration.md): streams
// and consumers NACK made, with messages and a consumer part-way through
// them; NACK stopped; its manifests converted and applied. Every object
// is adopted as it is (the same creation time: not re-created; the same
// messages; the consumer's delivered and acknowledged sequences and
// pending acknowledgements untouched), and then drift is put back as for
// any kubenats resource. Careless variants caught: converted resources
// without adoptExisting (refused: ServerObjectExists, never Synced), a
// conversion that re-creates (a new creation time, messages gone), and a
// consumer reset (its ack floor back to 0).
//
// Not parallel: it counts the operator's adoptions and corrections of
// Streams in the process-wide metrics, which another test's would make.
func TestMovingFromNACK(t *testing.T) {
	ns := namespace(t)
	s := natsServer(t, 0)
	j := testnats.JetStream(t, s)
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// What NACK made: the same configuration its manifests ask for, no
	// kubenats marks.
	stream, err := j.CreateStream(c, js.StreamConfig{Name: "orders", Subjects: []string{"orders.*"}, Storage: js.FileStorage, MaxAge: time.Hour, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	consumer, err := stream.CreateOrUpdateConsumer(c, js.ConsumerConfig{Durable: "worker", DeliverPolicy: js.DeliverAllPolicy,
		FilterSubject: "orders.received", MaxDeliver: 20, AckPolicy: js.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := j.Publish(c, "orders.received", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	batch, err := consumer.Fetch(6, js.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for msg := range batch.Messages() {
		if n < 4 {
			if err := msg.DoubleAck(c); err != nil {
				t.Fatal(err)
			}
		}
		n++
	}
	if n != 6 {
		t.Fatalf("fetched %d messages, want 6", n)
	}
	before := serverState(t, j)

	// The runbook: convert, label the Secrets it lists (none here), apply.
	res, err := convert.Convert(documentsOf(t, fmt.Sprintf(nackManifests, serverURL(s))), convert.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Lost) != 0 || len(res.Objects) != 2 {
		t.Fatalf("converted %d objects, not carried %v; want 2 and nothing lost", len(res.Objects), res.Lost)
	}
	adopted := testutil.ToFloat64(metrics.Writes.WithLabelValues("Stream", "adopted"))
	corrected := testutil.ToFloat64(metrics.Writes.WithLabelValues("Stream", "drift_corrected"))
	for _, obj := range res.Objects {
		create(t, obj)
	}
	st := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders"}}
	co := &v1alpha1.Consumer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "worker"}}
	jsReady(t, st, metav1.ConditionTrue, "Synced")
	jsReady(t, co, metav1.ConditionTrue, "Synced")
	if after := serverState(t, j); after != before {
		t.Fatalf("adoption changed the server's objects:\n  before %s\n  after  %s", before, after)
	}

	// Drift is put back, as for any kubenats resource.
	// (A change of one field: the operator's ownership mark in the
	// metadata stays, so this is drift, not an unmarked object to adopt.)
	live, err := j.Stream(c, "orders")
	if err != nil {
		t.Fatal(err)
	}
	changed := live.CachedInfo().Config
	changed.MaxAge = 2 * time.Hour
	if _, err := j.UpdateStream(c, changed); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		info, err := j.Stream(c, "orders")
		if err != nil {
			return err
		}
		if got := info.CachedInfo().Config.MaxAge; got != time.Hour {
			return fmt.Errorf("max age %v after drift, want 1h back", got)
		}
		return nil
	})
	// The operator's counters saw both: the adoption and the drift put back.
	if got := testutil.ToFloat64(metrics.Writes.WithLabelValues("Stream", "adopted")); got < adopted+1 {
		t.Errorf("kubenats_jetstream_server_writes_total{action=adopted} went from %v to %v", adopted, got)
	}
	eventually(t, wait, func() error {
		if got := testutil.ToFloat64(metrics.Writes.WithLabelValues("Stream", "drift_corrected")); got < corrected+1 {
			return fmt.Errorf("kubenats_jetstream_server_writes_total{action=drift_corrected} went from %v to %v", corrected, got)
		}
		return nil
	})
}

// serverState is what adoption must keep: the objects' creation times,
// the messages, and where the consumer stands. It is read once the
// consumer's pending count has caught up with the stream: the server
// counts a consumer's pending messages as it learns of new ones, after
// the publish is acknowledged, so a read right after the publishes may
// still say 0 of the 4 undelivered (a clean CI run saw 0, then 4).
func serverState(t *testing.T, j js.JetStream) string {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var si *js.StreamInfo
	var ci *js.ConsumerInfo
	eventually(t, 10*time.Second, func() error {
		stream, err := j.Stream(c, "orders")
		if err != nil {
			return err
		}
		consumer, err := stream.Consumer(c, "worker")
		if err != nil {
			return err
		}
		si, ci = stream.CachedInfo(), consumer.CachedInfo()
		if ci.NumPending != si.State.LastSeq-ci.Delivered.Stream {
			return fmt.Errorf("consumer pending %d, stream at %d, delivered %d: not caught up", ci.NumPending, si.State.LastSeq, ci.Delivered.Stream)
		}
		return nil
	})
	return fmt.Sprintf("stream created %s, %d messages, seq %d-%d; consumer created %s, delivered %d, ack floor %d, ack pending %d, pending %d",
		si.Created.UTC().Format(time.RFC3339Nano), si.State.Msgs, si.State.FirstSeq, si.State.LastSeq,
		ci.Created.UTC().Format(time.RFC3339Nano), ci.Delivered.Stream, ci.AckFloor.Stream, ci.NumAckPending, ci.NumPending)
}

func documentsOf(t *testing.T, text string) [][]byte {
	t.Helper()
	docs, err := manifest.Documents([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// TestConvertedNACKExamplesAreValidResources: what the conversion makes
// of each of NACK's examples is accepted by the API server as it is (the
// CRDs' own validation, dry run). The examples are the project's
// NACK-shaped stand-ins, or NACK's published ones when
// KUBENATS_UPSTREAM_FIXTURES names them (package upstream).
func TestConvertedNACKExamplesAreValidResources(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	dir := upstream.NACKExamples(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, documentsOf(t, string(data))...)
	}
	// The examples name two streams "mystream" and two "foo" Accounts:
	// convert each file alone, as a user would apply it.
	for i, doc := range docs {
		if strings.Contains(string(doc), "kind: Account") {
			continue
		}
		in := [][]byte{doc}
		if strings.Contains(string(doc), "account: a") {
			in = append(in, docs[accountIndex(t, docs)])
		}
		res, err := convert.Convert(in, convert.Options{Namespace: ns, Cluster: &v1alpha1.ClusterRef{Name: "nats"}})
		if err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		for _, obj := range res.Objects {
			if err := k8s.Create(ctx(t), obj, client.DryRunAll); err != nil {
				t.Errorf("document %d: the API server refuses the converted %s: %v", i, obj.GetName(), err)
			}
		}
	}
}

func accountIndex(t *testing.T, docs [][]byte) int {
	for i, d := range docs {
		if strings.Contains(string(d), "kind: Account") {
			return i
		}
	}
	t.Fatal("no NACK Account among the examples")
	return -1
}
