package jetstream

import (
	"reflect"
	"strings"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// minimalConsumer is a pull consumer as the API server stores it when only
// the stream and durable name are given.
func minimalConsumer() v1alpha1.ConsumerSpec {
	return v1alpha1.ConsumerSpec{
		StreamName:    "orders",
		DurableName:   "worker",
		DeliverPolicy: "all",
		AckPolicy:     "explicit",
		AckWait:       "30s",
		ReplayPolicy:  "instant",
	}
}

// fullConsumer sets every field the translation carries; not a consumer a
// server would accept (pull and push fields together).
func fullConsumer() v1alpha1.ConsumerSpec {
	return v1alpha1.ConsumerSpec{
		StreamName:         "orders",
		DurableName:        "worker",
		Description:        "does the work",
		DeliverPolicy:      "byStartTime",
		OptStartSeq:        42,
		OptStartTime:       &fixedMeta,
		AckPolicy:          "all",
		AckWait:            "1m0s",
		MaxDeliver:         5,
		Backoff:            []v1alpha1.Duration{"1s", "5s", "1m0s"},
		FilterSubject:      "orders.eu",
		FilterSubjects:     []string{"orders.us", "orders.asia"},
		ReplayPolicy:       "original",
		RateLimitBps:       1 << 20,
		SampleFreq:         "50%",
		MaxWaiting:         64,
		MaxAckPending:      100,
		HeadersOnly:        true,
		MaxRequestBatch:    10,
		MaxRequestExpires:  "30s",
		MaxRequestMaxBytes: 4096,
		InactiveThreshold:  "1h0m0s",
		Replicas:           3,
		MemStorage:         true,
		Metadata:           map[string]string{"team": "billing"},
		PriorityPolicy:     "pinned_client",
		PriorityTimeout:    "2m0s",
		PriorityGroups:     []string{"jobs", "batch"},
		DeliverSubject:     "push.worker",
		DeliverGroup:       "workers",
		FlowControl:        true,
		HeartbeatInterval:  "5s",
		PauseUntil:         &fixedMeta,
	}
}

func consumerWith(f func(*v1alpha1.ConsumerSpec)) v1alpha1.ConsumerSpec {
	s := minimalConsumer()
	f(&s)
	return s
}

func TestTranslateConsumerFullFixtureSetsEveryField(t *testing.T) {
	if zero := zeroFields(fullConsumer(), notTranslated...); len(zero) > 0 {
		t.Errorf("fullConsumer leaves fields unset, set them: %v", zero)
	}
}

func TestTranslateConsumerRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		spec v1alpha1.ConsumerSpec
	}{
		{"minimal with defaults", minimalConsumer()},
		{"every field", fullConsumer()},
		{"deliver all", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.DeliverPolicy = "all" })},
		{"deliver last", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.DeliverPolicy = "last" })},
		{"deliver new", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.DeliverPolicy = "new" })},
		{"deliver byStartSequence", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.DeliverPolicy, s.OptStartSeq = "byStartSequence", 9 })},
		{"deliver byStartTime", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.DeliverPolicy, s.OptStartTime = "byStartTime", &fixedMeta })},
		{"deliver lastPerSubject", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.DeliverPolicy = "lastPerSubject" })},
		{"ack none", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.AckPolicy = "none" })},
		{"ack all", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.AckPolicy = "all" })},
		{"ack explicit", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.AckPolicy = "explicit" })},
		{"replay instant", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.ReplayPolicy = "instant" })},
		{"replay original", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.ReplayPolicy = "original" })},
		{"priority unset", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.PriorityPolicy = "" })},
		{"priority overflow", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.PriorityPolicy = "overflow" })},
		{"priority pinned_client", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.PriorityPolicy = "pinned_client" })},
		{"priority prioritized", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.PriorityPolicy = "prioritized" })},
		{"ack wait zero", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.AckWait = "0s" })},
		{"backoff with a zero step", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.Backoff = []v1alpha1.Duration{"0s", "1s"} })},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ConsumerConfig(&tc.spec)
			if err != nil {
				t.Fatalf("ConsumerConfig: %v", err)
			}
			got := ConsumerSpecFrom(c, tc.spec.StreamName)
			if !reflect.DeepEqual(got, tc.spec) {
				t.Errorf("spec -> config -> spec changed:\n%s", strings.Join(fieldDiff(tc.spec, got), "\n"))
			}
		})
	}
}

// TestTranslateConsumerAliases covers spec values that mean the same as
// another and so read back in their canonical spelling.
func TestTranslateConsumerAliases(t *testing.T) {
	cases := []struct {
		name      string
		spec, out v1alpha1.ConsumerSpec
	}{
		{
			"priority none reads back unset",
			consumerWith(func(s *v1alpha1.ConsumerSpec) { s.PriorityPolicy = "none" }),
			consumerWith(func(s *v1alpha1.ConsumerSpec) { s.PriorityPolicy = "" }),
		},
		{
			"durations read back canonical",
			consumerWith(func(s *v1alpha1.ConsumerSpec) { s.AckWait, s.Backoff = "90s", []v1alpha1.Duration{"1m", "1h"} }),
			consumerWith(func(s *v1alpha1.ConsumerSpec) { s.AckWait, s.Backoff = "1m30s", []v1alpha1.Duration{"1m0s", "1h0m0s"} }),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ConsumerConfig(&tc.spec)
			if err != nil {
				t.Fatalf("ConsumerConfig: %v", err)
			}
			if got := ConsumerSpecFrom(c, tc.spec.StreamName); !reflect.DeepEqual(got, tc.out) {
				t.Errorf("got != want:\n%s", strings.Join(fieldDiff(tc.out, got), "\n"))
			}
		})
	}
}

// TestTranslateConsumerDefaults is the NACK complaint: a spec built in Go
// without the API server must not get ack none and a 1ns ack wait.
func TestTranslateConsumerDefaults(t *testing.T) {
	cases := []struct {
		name string
		spec v1alpha1.ConsumerSpec
		want js.ConsumerConfig
	}{{
		name: "empty spec gets the CRD defaults",
		spec: v1alpha1.ConsumerSpec{StreamName: "s", DurableName: "d"},
		want: js.ConsumerConfig{
			Name: "d", Durable: "d", DeliverPolicy: js.DeliverAllPolicy, AckPolicy: js.AckExplicitPolicy,
			AckWait: 30 * time.Second, ReplayPolicy: js.ReplayInstantPolicy,
		},
	}, {
		name: "explicit zero ack wait reaches the server as zero",
		spec: v1alpha1.ConsumerSpec{StreamName: "s", DurableName: "d", AckPolicy: "none", AckWait: "0s"},
		want: js.ConsumerConfig{Name: "d", Durable: "d", AckPolicy: js.AckNonePolicy},
	}, {
		name: "replicas 0 inherits the stream's",
		spec: v1alpha1.ConsumerSpec{StreamName: "s", DurableName: "d", Replicas: 0},
		want: js.ConsumerConfig{Name: "d", Durable: "d", AckWait: 30 * time.Second},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ConsumerConfig(&tc.spec)
			if err != nil {
				t.Fatalf("ConsumerConfig: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got != want:\n%s", strings.Join(fieldDiff(tc.want, got), "\n"))
			}
		})
	}
}

func TestTranslateConsumerSpecFromOddConfigs(t *testing.T) {
	cases := []struct {
		name  string
		cfg   js.ConsumerConfig
		check func(v1alpha1.ConsumerSpec) bool
	}{
		{"name without durable", js.ConsumerConfig{Name: "n"}, func(s v1alpha1.ConsumerSpec) bool { return s.DurableName == "n" }},
		{"durable wins over name", js.ConsumerConfig{Name: "n", Durable: "d"}, func(s v1alpha1.ConsumerSpec) bool { return s.DurableName == "d" }},
		{"stream from the caller", js.ConsumerConfig{}, func(s v1alpha1.ConsumerSpec) bool { return s.StreamName == "orders" }},
		{"flow_control ack policy is named", js.ConsumerConfig{AckPolicy: js.AckFlowControlPolicy}, func(s v1alpha1.ConsumerSpec) bool {
			return s.AckPolicy == "flow_control"
		}},
		{"unknown deliver policy", js.ConsumerConfig{DeliverPolicy: 42}, func(s v1alpha1.ConsumerSpec) bool { return s.DeliverPolicy == "unknown(42)" }},
		{"zero ack wait", js.ConsumerConfig{}, func(s v1alpha1.ConsumerSpec) bool { return s.AckWait == "0s" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ConsumerSpecFrom(tc.cfg, "orders"); !tc.check(got) {
				t.Errorf("unexpected spec %+v", got)
			}
		})
	}
	// flow_control translates back, and its consumers get no ack wait,
	// which the server would refuse, whatever ackWait says.
	s := ConsumerSpecFrom(js.ConsumerConfig{AckPolicy: js.AckFlowControlPolicy}, "orders")
	s.AckWait = "30s" // the CRD default
	c, err := ConsumerConfig(&s)
	if err != nil || c.AckPolicy != js.AckFlowControlPolicy || c.AckWait != 0 {
		t.Errorf("flow_control ack policy: got %v, ack wait %s, %v; want flow_control with no ack wait", c.AckPolicy, c.AckWait, err)
	}
}

func TestTranslateConsumerErrors(t *testing.T) {
	cases := []struct {
		name string
		spec v1alpha1.ConsumerSpec
		want []string
	}{
		{"bad ackWait", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.AckWait = "30" }), []string{"spec.ackWait", `"30"`}},
		{"bad backoff step", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.Backoff = []v1alpha1.Duration{"1s", "2s", "x"} }), []string{"spec.backoff[2]"}},
		{"bad maxRequestExpires", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.MaxRequestExpires = "1y" }), []string{"spec.maxRequestExpires"}},
		{"bad inactiveThreshold", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.InactiveThreshold = "m" }), []string{"spec.inactiveThreshold"}},
		{"bad priorityTimeout", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.PriorityTimeout = "1 m" }), []string{"spec.priorityTimeout"}},
		{"bad heartbeatInterval", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.HeartbeatInterval = "-5s" }), []string{"spec.heartbeatInterval", "negative"}},
		{"unknown deliverPolicy", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.DeliverPolicy = "by_start_sequence" }), []string{"spec.deliverPolicy", "byStartSequence"}},
		{"unknown ackPolicy", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.AckPolicy = "Explicit" }), []string{"spec.ackPolicy", "explicit, all, none"}},
		{"unknown replayPolicy", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.ReplayPolicy = "fast" }), []string{"spec.replayPolicy"}},
		{"unknown priorityPolicy", consumerWith(func(s *v1alpha1.ConsumerSpec) { s.PriorityPolicy = "pinned" }), []string{"spec.priorityPolicy"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ConsumerConfig(&tc.spec)
			if err == nil {
				t.Fatalf("no error, config %+v", c)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}
