package natscluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/servers"
	"github.com/kubenats/kubenats/internal/status"
)

// The operator reloads the servers itself, through the system account
// ($SYS.REQ.SERVER.<id>.RELOAD), and reports the configuration loaded only
// once every server says so: each file the servers read carries a mark in
// their server metadata (render.MetadataConfigKey, MetadataUsersKey),
// which /varz and every system reply show. A reload sent before the
// kubelet refreshed the files rereads the old ones, and the old marks tell;
// plan.Reload then sends it again later.

// reloads remembers, per cluster, since when its wanted configuration has
// been pending and which pods last confirmed it, so that a settled cluster
// costs no request at all and the reload interval grows with the wait. It
// is only a memory: a restarted operator looks again, at once.
type reloads struct {
	mu    sync.Mutex
	byUID map[types.UID]reloadMemory
}

type reloadMemory struct {
	want      string
	marks     plan.Marks // want, as marks
	since     time.Time
	confirmed string // the pods (UIDs) that confirmed want, "" when not all
}

// wantedMarks are the marks c's servers report once they loaded the
// current files: the revisions of nats.conf and users.conf, and the expiry
// of each certificate they serve (certMark), which changes when one is
// renewed; nats-server serves a renewed certificate only after a reload.
func wantedMarks(configRevision, usersRevision string, certs []status.Certificate) plan.Marks {
	m := plan.Marks{render.MetadataConfigKey: configRevision}
	if usersRevision != "" {
		m[render.MetadataUsersKey] = usersRevision
	}
	for _, cert := range certs {
		if cert.Found && cert.Invalid == "" && !cert.NotAfter.IsZero() {
			m[certMark(cert.Listener)] = cert.NotAfter.UTC().Format(time.RFC3339)
		}
	}
	return m
}

// certMark is the mark of the certificate a listener serves.
func certMark(listener string) string { return "certificate of " + listener }

// loadedMarks are the marks of what one server reports it loaded.
func loadedMarks(l natsmon.Loaded) plan.Marks {
	m := plan.Marks{}
	for k, v := range l.Metadata {
		m[k] = v
	}
	for listener, t := range l.CertNotAfter {
		m[certMark(listener)] = t.UTC().Format(time.RFC3339)
	}
	return m
}

// reloadConfig confirms, and brings about by reload, that every server
// runs the current configuration. It returns the ConfigLoaded verdict and
// when to look again, and fills in which servers are known to run older
// files or certificates (o.ConfigBehind, o.CertificatesBehind).
func (r *Reconciler) reloadConfig(ctx context.Context, c *v1alpha1.NatsCluster, o *status.ClusterObservation, pods []corev1.Pod, hung []string, want plan.Marks) (status.Verdict, time.Duration) {
	sts := o.StatefulSet
	key := fmt.Sprint(want)
	podSet := podUIDs(pods)
	mem := r.reloadMemory(c.UID, key, want)
	if mem.confirmed != "" && mem.confirmed == podSet {
		return configLoaded(), 0
	}
	a, err := r.Servers.Access(ctx, c)
	if err != nil {
		return configNotLoaded(v1alpha1.ReasonReloadPending, "waiting for the servers' access: "+err.Error()), settleRetry
	}
	obs := plan.ReloadObservation{Want: want, PendingFor: time.Since(mem.since), CanReload: c.HasSystemUser(),
		ReadyMarks: []string{render.MetadataConfigKey, render.MetadataUsersKey}}
	ids := map[string]string{}
	for i := range pods {
		p := &pods[i]
		if !p.DeletionTimestamp.IsZero() {
			continue
		}
		s := plan.ReloadServer{Name: p.Name, Outdated: sts == nil || p.Labels[appsv1.ControllerRevisionHashLabelKey] != sts.Status.UpdateRevision ||
			restartsFor(p, o.Template)}
		// A server this pass found hung is not asked again: it counts as
		// not answering.
		if p.Status.PodIP != "" && !slices.Contains(hung, p.Name) {
			url, hc := a.MonitorURL(r.Versions.HTTP, p, "/varz")
			if loaded, err := natsmon.FetchLoaded(ctx, hc, url); err == nil && validServerID(loaded.ServerID) {
				s.Answered, s.Marks, s.SinceLoad = true, loadedMarks(loaded), loaded.SinceLoad
				ids[p.Name] = loaded.ServerID
			}
		}
		obs.Servers = append(obs.Servers, s)
	}
	if len(obs.Servers) < int(c.Spec.ReplicaCount()) {
		return configNotLoaded(v1alpha1.ReasonReloadPending, "waiting for every server to exist"), settleRetry
	}
	d := plan.Reload(obs)
	if len(d.Reload) > 0 {
		after := r.sendReloads(ctx, c, pods, a, d.Reload, ids)
		for i := range obs.Servers {
			s := &obs.Servers[i]
			if !contains(d.Reload, s.Name) {
				continue
			}
			// The reply's metadata is what the server loaded now; its
			// certificates show in /varz at the next look.
			s.SinceLoad = 0
			for k, v := range after[s.Name] {
				s.Marks[k] = v
			}
		}
		d = plan.Reload(obs)
	}
	o.ConfigBehind, o.CertificatesBehind = d.Behind, d.BehindOtherwise
	if d.Loaded {
		r.confirm(c.UID, key, podSet)
		return configLoaded(), 0
	}
	if d.Stalled {
		r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, v1alpha1.ReasonReloadStalled, "Reload", "%s", d.Waiting)
		return configNotLoaded(v1alpha1.ReasonReloadStalled, d.Waiting), d.RetryIn
	}
	return configNotLoaded(v1alpha1.ReasonReloadPending, d.Waiting), d.RetryIn
}

// sendReloads asks each named server to reload, as the system user, and
// returns the metadata each reply carries: the server's as it stands after
// the reload.
func (r *Reconciler) sendReloads(ctx context.Context, c *v1alpha1.NatsCluster, pods []corev1.Pod, a servers.Access, names []string, ids map[string]string) map[string]map[string]string {
	log := logf.FromContext(ctx)
	confirmed := map[string]map[string]string{}
	nc, err := a.Connect(pods, jetstream.MaxSystemAnswer)
	if err != nil {
		log.Info("cannot reload the servers", "error", err.Error())
		return confirmed
	}
	defer nc.Close()
	for _, name := range names {
		id, ok := ids[name]
		if !ok {
			continue
		}
		reqCtx, cancel := context.WithTimeout(ctx, systemPingWait)
		msg, err := nc.RequestWithContext(reqCtx, "$SYS.REQ.SERVER."+id+".RELOAD", nil)
		cancel()
		if err != nil {
			log.Info("reload request unanswered", "server", name, "error", err.Error())
			continue
		}
		reply, err := natsmon.DecodeReloadAnswer(msg.Data)
		if err != nil {
			continue
		}
		if reply.Refused {
			// The server's own log says why; its message may quote the
			// files, which hold passwords, so it is not repeated here.
			log.Info("a server refused the reload; see its log", "server", name, "code", reply.Code)
			r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, v1alpha1.ReasonReloadFailed, "Reload",
				"server %s refused to reload its configuration (see its log)", name)
			continue
		}
		confirmed[name] = reply.Metadata
	}
	return confirmed
}

// validServerID: a server ID goes into a subject, so it must be one token
// (an nkey: upper-case letters and digits). A server run from another
// image could claim "*" or "a.>" and have the reload reach others.
func validServerID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

func (r *Reconciler) reloadMemory(uid types.UID, want string, marks plan.Marks) reloadMemory {
	r.reloads.mu.Lock()
	defer r.reloads.mu.Unlock()
	if r.reloads.byUID == nil {
		r.reloads.byUID = map[types.UID]reloadMemory{}
	}
	mem, ok := r.reloads.byUID[uid]
	if !ok || mem.want != want {
		mem = reloadMemory{want: want, marks: marks, since: time.Now()}
		r.reloads.byUID[uid] = mem
	}
	return mem
}

// confirmedMark reports whether every server confirmed the files last
// written, and their marks had mark at value.
func (m *reloads) confirmedMark(uid types.UID, mark, value string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	mem, ok := m.byUID[uid]
	return ok && mem.confirmed != "" && mem.marks[mark] == value
}

func (r *Reconciler) confirm(uid types.UID, want, pods string) {
	r.reloads.mu.Lock()
	defer r.reloads.mu.Unlock()
	if mem, ok := r.reloads.byUID[uid]; ok && mem.want == want {
		mem.confirmed = pods
		r.reloads.byUID[uid] = mem
	}
}

// podUIDs names a set of pods: a new pod must confirm for itself.
func podUIDs(pods []corev1.Pod) string {
	out := ""
	for i := range pods {
		out += string(pods[i].UID) + ","
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func configLoaded() status.Verdict {
	return status.Verdict{Type: v1alpha1.ConditionConfigLoaded, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonConfigLoaded,
		Message: "every server runs the current configuration"}
}

func configNotLoaded(reason, msg string) status.Verdict {
	return status.Verdict{Type: v1alpha1.ConditionConfigLoaded, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
}

// restartsFor reports whether pod runs another restart annotation than the
// pod template this pass rendered: the rollout replaces it. The
// StatefulSet's status names the new revision only once its controller
// has seen the change, and until then a reload would be sent to a server
// whose kubelet has not refreshed its files (it rereads the old ones for
// nothing) and, in mode jwt, would register its accounts anew under the
// feet of a client connecting at that moment, which nats-server then
// refuses (TestAccountsSurviveARollingUpdate saw one such refusal).
func restartsFor(pod *corev1.Pod, template map[string]string) bool {
	for k, v := range template {
		if strings.HasPrefix(k, "kubenats.io/") && pod.Annotations[k] != v {
			return true
		}
	}
	return false
}
