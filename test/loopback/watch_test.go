package loopback

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/test/poll"
)

// seenEvent is one event WatchNamespace delivered, as the test keeps it.
type seenEvent struct {
	kind, name string
	typ        watch.EventType
	at         time.Time
}

// TestWatchNamespaceDeliversEachListedKind: the objects that exist come as
// Added, later changes of each listed kind follow in order with the time
// they were received, and another namespace's are not shown.
func TestWatchNamespaceDeliversEachListedKind(t *testing.T) {
	t.Parallel()
	cfg := bareAPIServer(t).Config
	k8s, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Config: cfg, Client: k8s}
	ctx := context.Background()
	for _, ns := range []string{"watched", "other"} {
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "watched", Name: "before"}}
	if err := k8s.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var seen []seenEvent
	events := func() []seenEvent {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	began := time.Now()
	if err := c.WatchNamespace(wctx, "watched", func(ev watch.Event, at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		name := fmt.Sprint(ev.Object) // an Error event's Status
		if o, ok := ev.Object.(client.Object); ok {
			name = o.GetName()
		}
		seen = append(seen, seenEvent{fmt.Sprintf("%T", ev.Object), name, ev.Type, at})
	}, &corev1.ConfigMapList{}, &corev1.SecretList{}); err != nil {
		t.Fatal(err)
	}

	cm.Data = map[string]string{"k": "v"}
	if err := k8s.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"other", "watched"} {
		if err := k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s-" + ns}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := k8s.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	want := []seenEvent{
		{"*v1.ConfigMap", "before", watch.Added, time.Time{}},
		{"*v1.ConfigMap", "before", watch.Modified, time.Time{}},
		{"*v1.ConfigMap", "before", watch.Deleted, time.Time{}},
		{"*v1.Secret", "s-watched", watch.Added, time.Time{}},
	}
	poll.Until(t, 30*time.Second, func() error {
		if n := len(events()); n < len(want) {
			return fmt.Errorf("%d events seen, want %d: %+v", n, len(want), events())
		}
		return nil
	})
	// Nothing else comes: not the other namespace's Secret, no repeats.
	poll.Holds(t, 2*time.Second, func() error {
		if n := len(events()); n != len(want) {
			return fmt.Errorf("%d events seen, want %d: %+v", n, len(want), events())
		}
		return nil
	})
	got := events()
	// The two lists' events interleave in any order; each list's keep theirs.
	var configMaps, secrets []seenEvent
	for _, e := range got {
		if e.at.Before(began) || e.at.After(time.Now()) {
			t.Errorf("event %+v received outside the watch's lifetime (began %s)", e, began)
		}
		if e.kind == "*v1.Secret" {
			secrets = append(secrets, e)
		} else {
			configMaps = append(configMaps, e)
		}
	}
	for i := 1; i < len(configMaps); i++ {
		if configMaps[i].at.Before(configMaps[i-1].at) {
			t.Errorf("ConfigMap events out of time order: %+v", configMaps)
		}
	}
	sameEvents := func(a, b []seenEvent) bool {
		return slices.EqualFunc(a, b, func(x, y seenEvent) bool { return x.kind == y.kind && x.name == y.name && x.typ == y.typ })
	}
	if !sameEvents(configMaps, want[:3]) || !sameEvents(secrets, want[3:]) {
		t.Errorf("events seen %+v, want %+v (in any interleaving of the two kinds)", got, want)
	}
}

// TestWatchNamespaceResumesWhenTheServerEndsIt: the API server ends every
// watch after a while (here after a second, asked for); the watch goes on
// from where it was, so a change made after the first watch ended is seen,
// once, and nothing seen before is delivered again. The careless variant,
// a watch that stops with the server's (the code before this test), fails
// the wait for the resumption, and never sees the change: an e2e test once
// waited in vain for a Ready True its watch should have delivered.
func TestWatchNamespaceResumesWhenTheServerEndsIt(t *testing.T) {
	t.Parallel()
	cfg := bareAPIServer(t).Config
	k8s, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Config: cfg, Client: k8s}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "resumed"}}); err != nil {
		t.Fatal(err)
	}
	one := int64(1)
	c.watches.timeout = &one
	var mu sync.Mutex
	var names []string
	if err := c.WatchNamespace(ctx, "resumed", func(ev watch.Event, _ time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if o, ok := ev.Object.(client.Object); ok {
			names = append(names, string(ev.Type)+" "+o.GetName())
		}
	}, &corev1.ConfigMapList{}); err != nil {
		t.Fatal(err)
	}
	create := func(name string) {
		t.Helper()
		if err := k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "resumed", Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	create("before")
	resumedBefore := c.watches.resumed.Load()
	poll.Until(t, 30*time.Second, func() error {
		if n := c.watches.resumed.Load() - resumedBefore; n < 2 {
			return fmt.Errorf("the watch was resumed %d times", n)
		}
		return nil
	})
	create("after")
	want := []string{"ADDED before", "ADDED after"}
	seen := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(names)
	}
	poll.Until(t, 30*time.Second, func() error {
		if got := seen(); !slices.Equal(got, want) {
			return fmt.Errorf("seen %v, want %v", got, want)
		}
		return nil
	})
	poll.Holds(t, 2*time.Second, func() error {
		if got := seen(); !slices.Equal(got, want) {
			return fmt.Errorf("seen %v, want %v", got, want)
		}
		return nil
	})
}
