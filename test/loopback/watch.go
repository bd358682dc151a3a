package loopback

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WatchNamespace watches the objects of each list's kind in ns, as the
// cluster's administrator with its Client's scheme, until ctx ends; seen
// gets every event with the moment this process received it (Error events
// among them, whose Object is a Status), one list's events in order (each
// list's on a goroutine of its own). Watch events
// arrive milliseconds after the API server stored the change, much finer
// than the seconds of a condition's transition time, which is what tests
// that time a cluster's milestones want. A watch begins with the objects
// that exist, as Added events.
//
// The API server ends every watch after a while (its request timeout, a
// restart of its watch cache): each is resumed from the last resource
// version seen, so that a test that watches for long misses nothing. Only
// when that version is too old for the server (410 Gone, after Error's
// event) does it start over, with the objects that exist as Added again.
func (c *Cluster) WatchNamespace(ctx context.Context, ns string, seen func(ev watch.Event, at time.Time), lists ...client.ObjectList) error {
	wc, err := client.NewWithWatch(c.Config, client.Options{Scheme: c.Client.Scheme()})
	if err != nil {
		return err
	}
	for _, list := range lists {
		w := &resumingWatch{wc: wc, list: list, ns: ns, tuning: &c.watches}
		// The first watch is made here: what changes after WatchNamespace
		// returns is seen.
		events, err := w.start(ctx)
		if err != nil {
			return err
		}
		go w.run(ctx, events, seen)
	}
	return nil
}

// watchTuning is a Cluster's own, for tests of WatchNamespace: timeout,
// when set, asks the API server to end each watch after that many seconds;
// resumed counts the watches made again after one ended.
type watchTuning struct {
	timeout *int64
	resumed atomic.Int64
}

// resumeRetry spaces attempts to watch again while the API server refuses.
const resumeRetry = 200 * time.Millisecond

type resumingWatch struct {
	wc     client.WithWatch
	list   client.ObjectList
	ns     string
	tuning *watchTuning
	// version is the resource version of the last event seen.
	version string
}

func (w *resumingWatch) start(ctx context.Context) (watch.Interface, error) {
	raw := &metav1.ListOptions{ResourceVersion: w.version, AllowWatchBookmarks: true, TimeoutSeconds: w.tuning.timeout}
	return w.wc.Watch(ctx, w.list, client.InNamespace(w.ns), &client.ListOptions{Raw: raw})
}

func (w *resumingWatch) run(ctx context.Context, events watch.Interface, seen func(ev watch.Event, at time.Time)) {
	for {
		for ev := range events.ResultChan() {
			at := time.Now()
			if obj, ok := ev.Object.(metav1.Object); ok {
				w.version = obj.GetResourceVersion()
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			if ev.Type == watch.Error && gone(ev) {
				w.version = ""
			}
			seen(ev, at)
		}
		events.Stop()
		for {
			if ctx.Err() != nil {
				return
			}
			var err error
			if events, err = w.start(ctx); err == nil {
				w.tuning.resumed.Add(1)
				break
			}
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(resumeRetry):
			}
		}
	}
}

// gone reports whether an Error event says the version watched from is
// too old.
func gone(ev watch.Event) bool {
	status, ok := ev.Object.(*metav1.Status)
	return ok && (status.Code == http.StatusGone || apierrors.IsResourceExpired(apierrors.FromObject(status)))
}
