package envtest_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/testnats"
)

func TestConsumerWaitsForItsStream(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s := natsServer(t, 0)
	j := testnats.JetStream(t, s)
	target := at(serverURL(s))
	cons := newConsumer(ns, "worker", "jobs", target, func(c *v1alpha1.ConsumerSpec) {
		c.FilterSubjects = []string{"jobs.a", "jobs.b"}
		c.MaxDeliver = 5
		c.Backoff = []v1alpha1.Duration{"1s", "5s"}
	})
	create(t, cons)
	jsReady(t, cons, metav1.ConditionFalse, "StreamNotFound")

	create(t, newStream(ns, "jobs", target))
	jsReady(t, cons, metav1.ConditionTrue, "Synced")
	c, err := j.Consumer(ctx(t), "jobs", "worker")
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.CachedInfo().Config
	// With a backoff the server waits backoff[0] for the first ack.
	if cfg.AckPolicy != js.AckExplicitPolicy || cfg.AckWait != time.Second || len(cfg.FilterSubjects) != 2 {
		t.Fatalf("consumer config %+v: want explicit acks, 1s first ack wait, two filters", cfg)
	}

	// Back to zero: the filters and the backoff leave the server too.
	update(t, cons, func(c *v1alpha1.Consumer) { c.Spec.FilterSubjects, c.Spec.Backoff, c.Spec.MaxDeliver = nil, nil, 0 })
	eventually(t, wait, func() error {
		c, err := j.Consumer(ctx(t), "jobs", "worker")
		if err != nil {
			return err
		}
		cfg := c.CachedInfo().Config
		if len(cfg.FilterSubjects) != 0 || len(cfg.BackOff) != 0 || cfg.AckWait != 30*time.Second {
			return fmt.Errorf("filters %v, backoff %v, ack wait %s: want none, none, the 30s default", cfg.FilterSubjects, cfg.BackOff, cfg.AckWait)
		}
		return nil
	})

	// Deleted on the server: recreated.
	if err := j.DeleteConsumer(ctx(t), "jobs", "worker"); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		_, err := j.Consumer(ctx(t), "jobs", "worker")
		return err
	})

	if err := k8s.Delete(ctx(t), cons); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		if _, err := j.Consumer(ctx(t), "jobs", "worker"); !errors.Is(err, js.ErrConsumerNotFound) {
			return fmt.Errorf("consumer still on the server: %v", err)
		}
		return nil
	})
}

// The server sends no advisory when a consumer is updated; the operator
// learns of it from the API audit, within seconds (the resync is minutes
// away).
func TestConsumerEditedOnTheServerIsRestored(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s := natsServer(t, 0)
	j := testnats.JetStream(t, s)
	target := at(serverURL(s))
	create(t, newStream(ns, "edits", target))
	cons := newConsumer(ns, "edited", "edits", target, func(c *v1alpha1.ConsumerSpec) { c.MaxAckPending = 10 })
	create(t, cons)
	jsReady(t, cons, metav1.ConditionTrue, "Synced")

	c, err := j.Consumer(ctx(t), "edits", "edited")
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.CachedInfo().Config
	cfg.MaxAckPending = 999
	if _, err := j.UpdateConsumer(ctx(t), "edits", cfg); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		c, err := j.Consumer(ctx(t), "edits", "edited")
		if err != nil {
			return err
		}
		if n := c.CachedInfo().Config.MaxAckPending; n != 10 {
			return fmt.Errorf("maxAckPending %d on the server, want 10 restored", n)
		}
		return nil
	})
	eventually(t, wait, func() error { return eventWithReason(t, ns, "DriftCorrected") })
}
