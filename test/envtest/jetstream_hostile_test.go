package envtest_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/testnats"
)

// TestUnreachableSystemsLookTheSame: a closed port, a name that does not
// resolve and a server that never speaks give one and the same condition,
// so that a tenant cannot use connection.servers to map what answers where.
func TestUnreachableSystemsLookTheSame(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	silent := testnats.StartHostile(t, func(w *testnats.HostileWriter) { w.Hold() }, nil)
	targets := map[string]string{
		"closed":     fmt.Sprintf("nats://127.0.0.1:%d", freePort(t)),
		"unresolved": "nats://no-such-host.invalid:4222",
		"silent":     silent.URL(),
	}
	var streams []*v1alpha1.Stream
	for name, url := range targets {
		st := newStream(ns, name, at(url))
		create(t, st)
		streams = append(streams, st)
	}
	var first string
	for _, st := range streams {
		jsReady(t, st, metav1.ConditionFalse, "ConnectionFailed")
		msg := meta.FindStatusCondition(st.Status.Conditions, v1alpha1.ConditionReady).Message
		if first == "" {
			first = msg
		}
		if msg != first {
			t.Errorf("%s: message %q differs from %q", st.Name, msg, first)
		}
	}
}

// TestHostileServerCannotStopTheOperator: a server that announces a message
// of 10^18 bytes (nats.go would allocate it in its read loop and take the
// process down) leaves the operator running: its resource is not Ready, and
// a resource on a real server is synced afterwards by the same operator.
func TestHostileServerCannotStopTheOperator(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	hostile := testnats.StartHostile(t, nil, func(w *testnats.HostileWriter) {
		w.Write("MSG _INBOX.x 1 999999999999999999\r\n")
		w.Hold()
	})
	bad := newStream(ns, "hostile", at(hostile.URL()))
	create(t, bad)
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(bad), bad); err != nil {
			return err
		}
		c := meta.FindStatusCondition(bad.Status.Conditions, v1alpha1.ConditionReady)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "ConnectionFailed" {
			return fmt.Errorf("Ready %+v, want False/ConnectionFailed", c)
		}
		return nil
	})
	t.Logf("message: %s", meta.FindStatusCondition(bad.Status.Conditions, v1alpha1.ConditionReady).Message)
	good := newStream(ns, "good", at(serverURL(natsServer(t, 0))))
	create(t, good)
	jsReady(t, good, metav1.ConditionTrue, "Synced")
}
