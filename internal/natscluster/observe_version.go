package natscluster

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/servers"
)

// VersionProbe asks running servers their version on the monitor port's
// /varz. A pod's version cannot change without a new pod, so each answer is
// kept for the life of that pod and asked once.
type VersionProbe struct {
	HTTP *http.Client

	mu    sync.Mutex
	byPod map[types.NamespacedName]podVersion
}

type podVersion struct {
	uid     types.UID
	version string
}

// NewVersionProbe returns a probe whose requests give up after timeout,
// dialing through dial when it is not nil. Its client serves every plain
// http request to a monitor port: it follows no redirect and dials only
// the address a request was made for (natsmon.NewTransport).
func NewVersionProbe(timeout time.Duration, dial nats.CustomDialer) *VersionProbe {
	var through natsmon.DialFunc
	if dial != nil {
		through = func(_ context.Context, network, addr string) (net.Conn, error) { return dial.Dial(network, addr) }
	}
	hc := natsmon.NewClient(timeout, natsmon.NewTransport(through))
	return &VersionProbe{HTTP: hc, byPod: map[types.NamespacedName]podVersion{}}
}

// Oldest is the lowest version among the ready pods, "" when none answers.
// During a rolling upgrade it says what every server runs at least.
func (p *VersionProbe) Oldest(ctx context.Context, pods []corev1.Pod, a servers.Access) string {
	var oldest *version.Version
	for i := range pods {
		v, err := version.ParseSemantic(p.version(ctx, &pods[i], a))
		if err != nil {
			continue
		}
		if oldest == nil || v.LessThan(oldest) {
			oldest = v
		}
	}
	if oldest == nil {
		return ""
	}
	return oldest.String()
}

// Running is the version each pod's server runs: what it reports when
// ready, else the version its pod was made for (its version label), ""
// when neither is known.
func (p *VersionProbe) Running(ctx context.Context, pods []corev1.Pod, a servers.Access) map[string]string {
	out := make(map[string]string, len(pods))
	for i := range pods {
		v := p.version(ctx, &pods[i], a)
		if v == "" {
			v = pods[i].Labels[render.LabelVersion]
		}
		out[pods[i].Name] = v
	}
	return out
}

func (p *VersionProbe) version(ctx context.Context, pod *corev1.Pod, a servers.Access) string {
	if pod.Status.PodIP == "" || !servers.PodReady(pod) {
		return ""
	}
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	p.mu.Lock()
	known, ok := p.byPod[key]
	p.mu.Unlock()
	if ok && known.uid == pod.UID {
		return known.version
	}
	url, hc := a.MonitorURL(p.HTTP, pod, "/varz")
	v, err := natsmon.FetchVersion(ctx, hc, url)
	if err != nil {
		return ""
	}
	p.mu.Lock()
	p.byPod[key] = podVersion{uid: pod.UID, version: v}
	p.mu.Unlock()
	return v
}
