package natscluster

import (
	"context"
	"strconv"
	"sync"
	"time"

	securityapi "istio.io/api/security/v1beta1"
	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/servers"
)

// PeerAuthenticationGroupKind is Istio's policy kind.
var PeerAuthenticationGroupKind = schema.GroupKind{Group: "security.istio.io", Kind: render.PeerAuthenticationKind}

// meshTrouble remembers since when each meshed cluster has been in
// trouble under STRICT (plan.MeshStep.Unhealthy). It lives in memory: an
// operator that restarts starts counting anew, which only delays a
// rollback (rollback: Automatic) or the report (Report).
type meshTrouble struct {
	mu    sync.Mutex
	since map[types.UID]time.Time
}

// record notes this pass's trouble and returns how long it has lasted.
func (m *meshTrouble) record(uid types.UID, trouble bool, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.since == nil {
		m.since = map[types.UID]time.Time{}
	}
	if !trouble {
		delete(m.since, uid)
		return
	}
	if _, ok := m.since[uid]; !ok {
		m.since[uid] = now
	}
}

func (m *meshTrouble) lasted(uid types.UID, now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if since, ok := m.since[uid]; ok {
		return now.Sub(since)
	}
	return 0
}

// meshLive is what the cluster shows of the mesh.
type meshLive struct {
	obs    plan.MeshObservation
	policy *securityv1.PeerAuthentication // c's own, nil when none
	pods   []corev1.Pod
}

// observeMesh reads what the mesh plan decides from: the live policy, the
// StatefulSet's template, each pod's sidecar, and, when STRICT is near or
// in force, the routes and JetStream.
func (r *Reconciler) observeMesh(ctx context.Context, c *v1alpha1.NatsCluster) (meshLive, error) {
	live := meshLive{obs: plan.MeshObservation{
		Generation: c.Generation, Want: int(c.Spec.ReplicaCount()), RollbackAfter: r.meshRollbackAfter(),
		PushAllowance: r.meshPushAllowance(),
	}}
	o := &live.obs
	if m := c.Spec.IstioMesh(); m != nil {
		o.Enabled, o.Target, o.AutomaticRollback = true, plan.Strict, m.AutomaticRollback()
		if m.MTLSMode() == v1alpha1.MeshMTLSPermissive {
			o.Target = plan.Permissive
		}
	}
	installed, err := r.Istio.Installed()
	if err != nil {
		return live, err
	}
	o.Installed = installed
	var sts appsv1.StatefulSet
	switch err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.StatefulSetName()}, &sts); {
	case err == nil && metav1.IsControlledBy(&sts, c):
		o.StatefulSetExists = true
		o.TemplateSidecars = sts.Spec.Template.Labels[render.LabelIstioInject] == "true"
		if live.pods, err = servers.ServerPods(ctx, r.Client, c, &sts); err != nil {
			return live, err
		}
	case err != nil && !apierrors.IsNotFound(err):
		return live, err
	}
	for i := range live.pods {
		o.Pods = append(o.Pods, meshPod(&live.pods[i], sts.Status.UpdateRevision))
	}
	if installed {
		if live.policy, err = r.livePolicy(ctx, c); err != nil {
			return live, err
		}
		o.Policy, o.RolledBackGeneration = policyMode(live.policy)
		o.PolicyUnchangedFor = r.meshModes.unchangedFor(c.UID, o.Policy, time.Now())
		if live.policy != nil {
			o.RolledBackFor = plan.MeshFault(live.policy.Annotations[render.AnnotationMeshRolledBackFor])
		}
	}
	if r.nearStrict(o) {
		r.observeHealth(ctx, c, live.pods, o)
	}
	o.UnhealthyFor = r.meshTrouble.lasted(c.UID, time.Now())
	return live, nil
}

// meshPod is what the plan needs of one server pod.
func meshPod(p *corev1.Pod, updateRevision string) plan.MeshPod {
	mp := plan.MeshPod{
		Name:        p.Name,
		Injected:    p.Annotations[render.AnnotationIstioStatus] != "",
		Ready:       servers.PodReady(p),
		Terminating: !p.DeletionTimestamp.IsZero(),
		Outdated:    updateRevision != "" && p.Labels[appsv1.ControllerRevisionHashLabelKey] != updateRevision,
	}
	// A classic sidecar is a container, a native one an init container
	// that keeps running; either reports its readiness.
	for _, statuses := range [][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses} {
		for _, s := range statuses {
			if s.Name == render.IstioProxyContainer && s.Ready {
				mp.ProxyReady = true
			}
		}
	}
	return mp
}

// livePolicy is c's PeerAuthentication, nil when there is none or it is
// not c's (the applier then reports the conflict).
func (r *Reconciler) livePolicy(ctx context.Context, c *v1alpha1.NatsCluster) (*securityv1.PeerAuthentication, error) {
	var pa securityv1.PeerAuthentication
	err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.PeerAuthenticationName()}, &pa)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case !metav1.IsControlledBy(&pa, c):
		return nil, nil
	}
	return &pa, nil
}

// policyMode reads the mode of a live policy; one edited to anything but
// PERMISSIVE or STRICT counts as none (the next apply restores it).
func policyMode(pa *securityv1.PeerAuthentication) (plan.MeshPolicy, int64) {
	if pa == nil {
		return plan.NoPolicy, 0
	}
	gen, _ := strconv.ParseInt(pa.Annotations[render.AnnotationMeshRolledBack], 10, 64)
	if pa.Spec.Mtls == nil {
		return plan.NoPolicy, gen
	}
	switch pa.Spec.Mtls.Mode {
	case securityapi.PeerAuthentication_MutualTLS_STRICT:
		return plan.Strict, gen
	case securityapi.PeerAuthentication_MutualTLS_PERMISSIVE:
		return plan.Permissive, gen
	}
	return plan.NoPolicy, gen
}

// meshModes remembers, per cluster, the policy mode last observed and
// since when: how long a mode has been in the object, for the time istiod
// needs to push it. It lives in memory (the operator's cache carries no
// managedFields to read a time from): an operator that restarts counts
// from its first look, which only makes it wait longer.
type meshModes struct {
	mu   sync.Mutex
	seen map[types.UID]seenMode
}

type seenMode struct {
	mode  plan.MeshPolicy
	since time.Time
}

// unchangedFor records mode as observed now and returns how long it has
// been the mode.
func (m *meshModes) unchangedFor(uid types.UID, mode plan.MeshPolicy, now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[types.UID]seenMode{}
	}
	s, ok := m.seen[uid]
	if !ok || s.mode != mode {
		m.seen[uid] = seenMode{mode: mode, since: now}
		return 0
	}
	return now.Sub(s.since)
}

// nearStrict: the routes and JetStream matter only under STRICT or when
// nothing else holds STRICT back; they cost a request per server.
func (r *Reconciler) nearStrict(o *plan.MeshObservation) bool {
	if !o.Enabled || !o.Installed || o.Target != plan.Strict || o.Policy == plan.NoPolicy || len(o.Pods) != o.Want {
		return false
	}
	for _, p := range o.Pods {
		if !p.Injected || !p.ProxyReady || !p.Ready || p.Terminating || p.Outdated {
			return false
		}
	}
	return true
}

// observeHealth fills in the routes and JetStream, as the servers see them.
func (r *Reconciler) observeHealth(ctx context.Context, c *v1alpha1.NatsCluster, pods []corev1.Pod, o *plan.MeshObservation) {
	if c.HasRoutes() && len(pods) > 1 {
		a, err := r.Servers.Access(ctx, c)
		peers := make(map[string][]string, len(pods))
		for i := range pods {
			peers[pods[i].Name] = nil
			if err != nil {
				continue
			}
			url, hc := a.MonitorURL(r.Versions.HTTP, &pods[i], "/routez")
			if got, err := natsmon.FetchRoutePeers(ctx, hc, url); err == nil {
				peers[pods[i].Name] = append([]string{}, got...)
			}
		}
		o.MissingRoute = natsmon.MissingRoute(peers)
		for i := range pods {
			if peers[pods[i].Name] == nil && o.Silent == "" {
				o.Silent = pods[i].Name
			}
		}
	}
	if c.Spec.JetStreamEnabled() && len(pods) > 1 {
		o.Unsettled = natsmon.Unsettled(r.jetStreamViews(ctx, c, pods))
	}
}

// meshRollbackAfter is how long trouble under STRICT is borne.
func (r *Reconciler) meshRollbackAfter() time.Duration {
	if r.MeshRollbackAfter > 0 {
		return r.MeshRollbackAfter
	}
	return DefaultMeshRollbackAfter
}

// meshPushAllowance is how long istiod is given to push a policy change.
func (r *Reconciler) meshPushAllowance() time.Duration {
	if r.MeshPushAllowance > 0 {
		return r.MeshPushAllowance
	}
	return DefaultMeshPushAllowance
}

// DefaultMeshPushAllowance covers istiod's longest debounce (10 s by
// default, PILOT_DEBOUNCE_MAX) and the push itself.
const DefaultMeshPushAllowance = 15 * time.Second

// DefaultMeshRollbackAfter outlasts a server's restart outside a rollout
// (a crash, a killed proxy restarted by the kubelet): trouble that lasts
// longer is the mesh's.
const DefaultMeshRollbackAfter = time.Minute
