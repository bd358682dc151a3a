package natscluster

import (
	"context"
	"fmt"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/servers"
	"github.com/kubenats/kubenats/internal/status"
)

// versionChangeRefusal checks a change of c's nats-server version before
// the StatefulSet that would roll it is applied (plan.CheckVersionChange),
// from what each server runs and the streams and consumers they host. A
// refused change is a blocker: the StatefulSet is held, every server
// keeps the version it runs. It is looked at again now and then, since
// what refuses it (a stream's configuration) changes on the servers.
//
// Only the change from the StatefulSet's template to the spec is checked:
// once the template carries the new version, the rollout is under way.
func (r *Reconciler) versionChangeRefusal(ctx context.Context, c *v1alpha1.NatsCluster, live *appsv1.StatefulSet, pods []corev1.Pod) (*status.Blocker, error) {
	from := live.Spec.Template.Labels[render.LabelVersion]
	if from == "" || from == c.Spec.Version {
		return nil, nil
	}
	a, err := r.Servers.Access(ctx, c)
	if err != nil {
		return nil, err
	}
	change := plan.VersionChange{To: c.Spec.Version, Servers: r.Versions.Running(ctx, pods, a), Allowed: c.Annotations[plan.AnnotationAllowVersionChange]}
	var unread []string
	change.Streams, unread = r.streamUses(ctx, pods, a)
	if len(unread) > 0 {
		return &status.Blocker{Reason: v1alpha1.ReasonVersionChangeRefused, Fatal: true,
			Message: fmt.Sprintf("the change from nats-server %s to %s waits for the servers' streams to be read: %s", from, c.Spec.Version, strings.Join(unread, "; "))}, nil
	}
	verdict := plan.CheckVersionChange(change)
	switch {
	case verdict.Overridden:
		r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, "VersionChangeAllowed", "CheckVersionChange",
			"moving to nats-server %s although: %s (allowed by %s)", c.Spec.Version, strings.Join(verdict.Reasons, "; "), plan.AnnotationAllowVersionChange)
	case verdict.Refused():
		return &status.Blocker{Reason: v1alpha1.ReasonVersionChangeRefused, Fatal: true,
			Message: fmt.Sprintf("nats-server stays at %s: %s", from, strings.Join(verdict.Reasons, "; "))}, nil
	}
	return nil, nil
}

// streamUses reads every ready server's streams and consumers (each lists
// those it hosts a replica of), and names the servers that did not say.
func (r *Reconciler) streamUses(ctx context.Context, pods []corev1.Pod, a servers.Access) ([]plan.StreamUse, []string) {
	plain := natsmon.NewClient(r.answerBound(), r.Versions.HTTP.Transport)
	var (
		mu     sync.Mutex
		uses   []plan.StreamUse
		unread []string
		wg     sync.WaitGroup
	)
	for i := range pods {
		pod := &pods[i]
		if pod.Status.PodIP == "" || !pod.DeletionTimestamp.IsZero() || !servers.PodReady(pod) {
			continue
		}
		url, hc := a.MonitorURL(plain, pod, natsmon.JSZQuery)
		wg.Add(1)
		go func() {
			defer wg.Done()
			info, err := natsmon.FetchJSZ(ctx, hc, url)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				unread = append(unread, pod.Name+": "+natsmon.Shown(err.Error()))
				return
			}
			uses = append(uses, streamUsesOf(info)...)
		}()
	}
	wg.Wait()
	return uses, unread
}

// streamUsesOf is what a version change must know of one server's view.
func streamUsesOf(info *natsmon.JSInfo) []plan.StreamUse {
	var out []plan.StreamUse
	for _, acc := range info.Accounts {
		for _, st := range acc.Streams {
			out = append(out, plan.StreamUse{Account: acc.Name, Stream: st.Name, RequiredLevel: st.RequiredLevel, DiscardNewSchedules: st.DiscardNewSchedules})
			for _, co := range st.Consumers {
				if co.RequiredLevel > 0 {
					out = append(out, plan.StreamUse{Account: acc.Name, Stream: st.Name, Consumer: co.Name, RequiredLevel: co.RequiredLevel})
				}
			}
		}
	}
	return out
}
