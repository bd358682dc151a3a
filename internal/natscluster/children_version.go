package natscluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
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
//
// silent gets the servers that did not answer within the answer bound.
func (r *Reconciler) versionChangeRefusal(ctx context.Context, c *v1alpha1.NatsCluster, live *appsv1.StatefulSet, pods []corev1.Pod, silent *[]string) (*status.Blocker, error) {
	from := live.Spec.Template.Labels[render.LabelVersion]
	if from == "" || from == c.Spec.Version {
		return nil, nil
	}
	a, err := r.Servers.Access(ctx, c)
	if err != nil {
		return nil, err
	}
	change := plan.VersionChange{To: c.Spec.Version, Servers: r.Versions.Running(ctx, pods, a), Allowed: c.Annotations[plan.AnnotationAllowVersionChange]}
	uses := r.streamUses(ctx, pods, a)
	change.Streams, change.Silent, change.Unreadable = uses.streams, uses.silent, uses.unreadable
	// A silent server is reported hung by observe without being asked
	// again in this pass.
	*silent = uses.silent
	verdict := plan.CheckVersionChange(change)
	switch {
	case verdict.Waits():
		return &status.Blocker{Reason: v1alpha1.ReasonProgressing,
			Message: fmt.Sprintf("rolling update to nats-server %s: checked once every server answers; %s", c.Spec.Version, hungMessage(verdict.WaitFor, r.answerBound()))}, nil
	case verdict.Overridden:
		r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, "VersionChangeAllowed", "CheckVersionChange",
			"moving to nats-server %s although: %s (allowed by %s)", c.Spec.Version, strings.Join(verdict.Reasons, "; "), plan.AnnotationAllowVersionChange)
	case verdict.Refused():
		return &status.Blocker{Reason: v1alpha1.ReasonVersionChangeRefused, Fatal: true,
			Message: fmt.Sprintf("nats-server stays at %s: %s", from, strings.Join(verdict.Reasons, "; "))}, nil
	}
	return nil, nil
}

// streamsRead is what the servers said of their streams: the streams and
// consumers, the servers that did not answer within the bound (silent),
// and those whose answer could not be read.
type streamsRead struct {
	streams            []plan.StreamUse
	silent, unreadable []string
}

// streamUses reads every ready server's streams and consumers (each lists
// those it hosts a replica of).
func (r *Reconciler) streamUses(ctx context.Context, pods []corev1.Pod, a servers.Access) streamsRead {
	plain := natsmon.NewClient(r.answerBound(), r.Versions.HTTP.Transport)
	var (
		mu  sync.Mutex
		out streamsRead
		wg  sync.WaitGroup
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
			var ne net.Error
			switch {
			case err != nil && errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil:
				out.silent = append(out.silent, pod.Name)
			case err != nil:
				out.unreadable = append(out.unreadable, pod.Name+" ("+natsmon.Shown(err.Error())+")")
			default:
				out.streams = append(out.streams, streamUsesOf(info)...)
			}
		}()
	}
	wg.Wait()
	sort.Strings(out.silent)
	sort.Strings(out.unreadable)
	return out
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
