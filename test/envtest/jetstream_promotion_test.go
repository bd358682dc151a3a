package envtest_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/testnats"
)

// TestStandbyPromotedByRemovingItsMirror: a Stream that mirrors another
// follows it; removing spec.mirror (kubectl kubenats promote) makes it a
// stream of its own on the server (nats-server 2.12+ promotes a mirror
// whose update drops the mirror): it keeps every message it had, stops
// following the origin, and takes writes on its own subjects. Careless
// variant seen failing: a reconciler that treats the mirror as fixed once
// made and sends the update with the server's mirror kept (the server's
// config still named the origin after 30 s). Careless variant of the
// status watched failing: status.mirror kept from the last pass that saw
// one (a promoted standby still showing its lag).
func TestStandbyPromotedByRemovingItsMirror(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s := natsServer(t, 0)
	j := testnats.JetStream(t, s)
	origin := newStream(ns, "origin", at(serverURL(s)))
	create(t, origin)
	jsReady(t, origin, metav1.ConditionTrue, "Synced")
	for i := range 5 {
		if _, err := j.Publish(ctx(t), "origin.x", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	standby := newStream(ns, "standby", at(serverURL(s)), func(sp *v1alpha1.StreamSpec) {
		sp.Subjects, sp.Mirror = nil, &v1alpha1.StreamSource{Name: "origin"}
	})
	create(t, standby)
	jsReady(t, standby, metav1.ConditionTrue, "Synced")
	messages := func(name string) (uint64, error) {
		st, err := j.Stream(ctx(t), name)
		if err != nil {
			return 0, err
		}
		return st.CachedInfo().State.Msgs, nil
	}
	eventually(t, wait, func() error {
		if n, err := messages("standby"); err != nil || n != 5 {
			return fmt.Errorf("standby holds %d messages (%v), want the origin's 5", n, err)
		}
		return nil
	})

	// The standby's distance from its origin is in its status (a pass
	// every mirrorResync), and gone once it is promoted.
	mirrorStatus := func() (*v1alpha1.MirrorStatus, error) {
		var got v1alpha1.Stream
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(standby), &got); err != nil {
			return nil, err
		}
		return got.Status.Mirror, nil
	}
	eventually(t, time.Minute, func() error {
		m, err := mirrorStatus()
		if err != nil || m == nil || m.Lag != 0 || m.LastContact == "" {
			return fmt.Errorf("standby's status.mirror is %+v (%v), want lag 0 and a last contact", m, err)
		}
		return nil
	})
	update(t, standby, func(st *v1alpha1.Stream) { st.Spec.Mirror, st.Spec.Subjects = nil, []string{"promoted.>"} })
	eventually(t, wait, func() error {
		cfg, err := serverStream(t, j, "standby")
		if err != nil {
			return err
		}
		if cfg.Mirror != nil || len(cfg.Subjects) != 1 || cfg.Subjects[0] != "promoted.>" {
			return fmt.Errorf("server config: mirror %+v, subjects %v", cfg.Mirror, cfg.Subjects)
		}
		return nil
	})
	if _, err := j.Publish(ctx(t), "promoted.x", []byte("own")); err != nil {
		t.Fatalf("a write to the promoted stream: %v", err)
	}
	if _, err := j.Publish(ctx(t), "origin.x", []byte("after")); err != nil {
		t.Fatal(err)
	}
	// Held over a window (a mirror catches up within milliseconds here):
	// the origin's later message never arrives.
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if n, err := messages("standby"); err != nil || n != 6 {
			t.Fatalf("promoted standby holds %d messages (%v), want its 5 and its own 1, nothing more from the origin", n, err)
		}
	}
	jsReady(t, standby, metav1.ConditionTrue, "Synced")
	if m, err := mirrorStatus(); err != nil || m != nil {
		t.Fatalf("the promoted standby's status still has a mirror: %+v (%v)", m, err)
	}
}
