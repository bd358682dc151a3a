package loopback

import (
	"context"
	"time"

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
func (c *Cluster) WatchNamespace(ctx context.Context, ns string, seen func(ev watch.Event, at time.Time), lists ...client.ObjectList) error {
	wc, err := client.NewWithWatch(c.Config, client.Options{Scheme: c.Client.Scheme()})
	if err != nil {
		return err
	}
	for _, list := range lists {
		events, err := wc.Watch(ctx, list, client.InNamespace(ns))
		if err != nil {
			return err
		}
		go func() {
			defer events.Stop()
			for ev := range events.ResultChan() {
				seen(ev, time.Now())
			}
		}()
	}
	return nil
}
