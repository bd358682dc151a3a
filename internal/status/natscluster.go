package status

import (
	"cmp"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsmon"
)

// Blocker is why a pass could not apply what the spec asks for.
type Blocker struct {
	Reason  string
	Message string
	// Fatal blockers need the user to act (a name conflict, a bad Secret,
	// a refused scale-down, a halted rollout); others clear up by
	// themselves (an API error). Fatal is phase Failed and the Stalled
	// condition, which GitOps tools read as Failed.
	Fatal bool
}

// ClusterObservation is what the controller saw of a NatsCluster's parts.
type ClusterObservation struct {
	// Cluster is the resource, defaulted.
	Cluster *v1alpha1.NatsCluster
	// StatefulSet and ClientService are the live objects; nil when absent.
	StatefulSet   *appsv1.StatefulSet
	ClientService *corev1.Service
	// Template are the annotations of the pod template the pass rendered:
	// a pod without them is replaced by the rollout, even while the
	// StatefulSet's status does not name the new revision yet.
	Template map[string]string
	// Takeover is the phase of a chart release's takeover, nil for none.
	Takeover *v1alpha1.TakeoverStatus
	// Blocker is set when the pass stopped short.
	Blocker *Blocker
	// Silent are the servers that gave no answer within the bound earlier
	// in the pass (the version check): observe counts them hung without
	// asking them again, so that a pass waits on a hung server once.
	Silent []string
	// OOMKilled says, per server that is not ready, that the kernel
	// killed it for its memory limit; empty when none was.
	OOMKilled []string
	// Hung names the servers whose pods pass their probes but which do not
	// answer the operator (stopped, cut off); "" when every one answers.
	Hung string
	// ObservedVersion is the version a running server reported; "" if none.
	ObservedVersion string
	// Certificates are the certificates the servers mount.
	Certificates []Certificate
	// ConfigLoaded says whether every server confirmed it loaded the
	// current configuration; Unknown when the pass did not look.
	ConfigLoaded Verdict
	// ConfigBehind names the current servers known to run older files
	// than the operator wrote last: Ready waits for them.
	ConfigBehind []string
	// CertificatesBehind names the current servers that still serve an
	// older certificate than the one mounted. Ready waits for them only
	// while it is not True yet (a cluster forming, a rollout): a server
	// reloaded then can refuse a client in the middle of connecting. Once
	// Ready, a renewal loaded seconds late does not turn it False: the
	// old certificate is still valid.
	CertificatesBehind []string
	// Leaders are the groups each server leads, as counted by this pass;
	// nil when it did not count them.
	Leaders []v1alpha1.ServerLeaders
	// Stores is what the ready servers reported of their JetStream file
	// stores, by server; a server that did not answer is absent.
	Stores map[string]natsmon.StoreUse
	// Mesh is the MeshReady condition; nil when the cluster has none.
	Mesh *Verdict
	// Monitoring is the MonitoringReady condition; nil without
	// spec.monitoring.
	Monitoring *Verdict
	// OperatorKeys is the OperatorSigningKeyRotated condition; nil before
	// any rotation was asked for.
	OperatorKeys *Verdict
	// NodeZones are the zones of the nodes the servers may run on, as the
	// pass read them; nil when it did not (namespaced install).
	NodeZones []string
	// Carried are the request annotations carried out; nil: as before.
	Carried *v1alpha1.CarriedRequests
	// Zones are the servers per zone; nil when no server's node names one.
	Zones []v1alpha1.ZoneServers
	// ZoneRedundancy is the ZoneRedundant condition; nil when the nodes
	// name fewer than two zones.
	ZoneRedundancy *Verdict
	// Now is the time a changed condition gets as its transition time.
	Now metav1.Time
	// Paused is the Paused condition of a paused cluster, nil otherwise.
	// The status then tells what runs, not what the spec will bring once
	// resumed: the StatefulSet's own replicas are wanted, the
	// observedGeneration stays the one last acted on (kstatus reads a
	// change made meanwhile as not yet current), a rollout waits for the
	// resume by name, and the conditions the paused pass does not look at
	// (mesh, monitoring, key rotation) keep their last value.
	Paused *Verdict
}

// NatsCluster computes the status of a NatsCluster.
func NatsCluster(o ClusterObservation) v1alpha1.NatsClusterStatus {
	c := o.Cluster
	want := c.Spec.ReplicaCount()
	generation := c.Generation
	if o.Paused != nil {
		generation = c.Status.ObservedGeneration
		if sts := o.StatefulSet; sts != nil && sts.Spec.Replicas != nil {
			want = *sts.Spec.Replicas
		}
		o.Mesh = cmp.Or(o.Mesh, carried(c.Status.Conditions, v1alpha1.ConditionMeshReady))
		o.Monitoring = cmp.Or(o.Monitoring, carried(c.Status.Conditions, v1alpha1.ConditionMonitoringReady))
		o.OperatorKeys = cmp.Or(o.OperatorKeys, carried(c.Status.Conditions, v1alpha1.ConditionOperatorSigningKeyRotated))
	}
	st := v1alpha1.NatsClusterStatus{
		ObservedGeneration:   generation,
		ServerVersion:        c.Spec.Version,
		ServerVersionSource:  v1alpha1.VersionConfigured,
		CredentialsSecretRef: &corev1.LocalObjectReference{Name: c.CredentialsSecretName()},
		Takeover:             o.Takeover,
	}
	if o.ObservedVersion != "" {
		st.ServerVersion, st.ServerVersionSource = o.ObservedVersion, v1alpha1.VersionObserved
	}
	// The leaders as last counted: a pass that did not count them (the
	// cluster not settled) keeps the count before.
	st.Leaders = c.Status.Leaders
	if o.Leaders != nil {
		st.Leaders = o.Leaders
	}
	if !c.Spec.JetStream.BalancesLeaders() || !c.Spec.JetStreamEnabled() {
		st.Leaders = nil
	}
	st.Zones = o.Zones
	st.MetaLeader = metaLeader(o.Stores)
	st.Carried = cmp.Or(o.Carried, c.Status.Carried)
	if sts := o.StatefulSet; sts != nil {
		st.Replicas, st.ReadyReplicas = sts.Status.Replicas, sts.Status.ReadyReplicas
	}
	endpoint, lbPending := Endpoint(c, o.ClientService)
	st.Endpoint = endpoint

	available := availability(st.ReadyReplicas, want)
	certs, expiry := certificates(o.Certificates, o.Now.Time)
	st.CertificatesExpiry = expiry
	ready := readiness(o, want, lbPending, certs)
	loaded := o.ConfigLoaded
	if loaded.Type == "" {
		loaded = Verdict{Type: v1alpha1.ConditionConfigLoaded, Status: metav1.ConditionUnknown, Reason: v1alpha1.ReasonReloadNotChecked, Message: "not checked"}
	}
	// A fatal blocker is the one state GitOps tools read as Failed: the
	// pass stopped and only the user's change lifts it.
	verdicts := WithProgress(ready, o.Blocker != nil && o.Blocker.Fatal, available, certs, loaded)
	if c.Spec.JetStreamEnabled() {
		verdicts = append(verdicts, storage(o.Stores))
	}
	if o.Mesh != nil {
		verdicts = append(verdicts, *o.Mesh)
	}
	if o.Monitoring != nil {
		verdicts = append(verdicts, *o.Monitoring)
	}
	if o.OperatorKeys != nil {
		verdicts = append(verdicts, *o.OperatorKeys)
	}
	if o.ZoneRedundancy != nil {
		verdicts = append(verdicts, *o.ZoneRedundancy)
	}
	if o.Paused != nil {
		verdicts = append(verdicts, *o.Paused)
	}
	st.Conditions = conditions(c.Status.Conditions, c.Generation, o.Now, verdicts...)
	st.Phase = phase(o.Blocker, ready)
	return st
}

// carried is the last verdict of condition t, nil when there was none.
func carried(prev []metav1.Condition, t string) *Verdict {
	c := meta.FindStatusCondition(prev, t)
	if c == nil {
		return nil
	}
	return &Verdict{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}
}

// availability: clients can use JetStream once a quorum of servers is ready.
func availability(ready, want int32) Verdict {
	quorum := want/2 + 1
	v := Verdict{Type: v1alpha1.ConditionAvailable, Status: boolStatus(ready >= quorum)}
	v.Reason, v.Message = v1alpha1.ReasonServersReady, fmt.Sprintf("%d of %d servers ready, %d needed", ready, want, quorum)
	if ready < quorum {
		v.Reason = v1alpha1.ReasonServersNotReady
	}
	return v
}

// readiness is True only when every part is ready; otherwise its reason
// names the first thing in the way.
func readiness(o ClusterObservation, want int32, lbPending bool, certs Verdict) Verdict {
	notReady := func(reason, msg string) Verdict {
		return Verdict{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
	}
	if b := o.Blocker; b != nil {
		return notReady(b.Reason, b.Message)
	}
	if len(o.OOMKilled) > 0 {
		return notReady(v1alpha1.ReasonOOMKilled, strings.Join(o.OOMKilled, "; "))
	}
	if o.Hung != "" {
		return notReady(v1alpha1.ReasonServerHung, o.Hung)
	}
	if certs.Status != metav1.ConditionTrue {
		return notReady(certs.Reason, certs.Message)
	}
	if msg := rolloutPending(o.StatefulSet, want); msg != "" && o.Paused != nil {
		return notReady(o.Paused.Reason, msg+"; paused, the operator does not carry it on")
	} else if msg != "" {
		return notReady(v1alpha1.ReasonProgressing, msg)
	}
	if len(o.ConfigBehind) > 0 {
		return notReady(v1alpha1.ReasonReloadPending, fmt.Sprintf("%s not loaded the configuration and credentials written last yet",
			haveOrHas(o.ConfigBehind)))
	}
	if len(o.CertificatesBehind) > 0 && !meta.IsStatusConditionTrue(o.Cluster.Status.Conditions, v1alpha1.ConditionReady) {
		return notReady(v1alpha1.ReasonReloadPending, fmt.Sprintf("%s not loaded the certificates mounted last yet",
			haveOrHas(o.CertificatesBehind)))
	}
	if lbPending {
		return notReady(v1alpha1.ReasonLoadBalancerPending, "the LoadBalancer has no external address yet")
	}
	return Verdict{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonReady,
		Message: fmt.Sprintf("%d of %d servers ready", want, want)}
}

// haveOrHas is "a has", "a, b have".
func haveOrHas(names []string) string {
	if len(names) == 1 {
		return names[0] + " has"
	}
	return strings.Join(names, ", ") + " have"
}

// rolloutPending says what the StatefulSet still waits for, or "" when every
// server runs the current template and is ready.
func rolloutPending(sts *appsv1.StatefulSet, want int32) string {
	switch {
	case sts == nil:
		return "the StatefulSet does not exist yet"
	case sts.Status.ObservedGeneration < sts.Generation:
		return "the StatefulSet controller has not seen the latest change yet"
	case sts.Status.UpdatedReplicas < want || (sts.Status.UpdateRevision != "" && sts.Status.CurrentRevision != sts.Status.UpdateRevision):
		return fmt.Sprintf("%d of %d servers updated", sts.Status.UpdatedReplicas, want)
	case sts.Status.Replicas > want:
		return fmt.Sprintf("scaling down to %d servers", want)
	case sts.Status.ReadyReplicas < want:
		return fmt.Sprintf("%d of %d servers ready", sts.Status.ReadyReplicas, want)
	}
	return ""
}

func phase(b *Blocker, ready Verdict) v1alpha1.Phase {
	switch {
	case b != nil && b.Fatal:
		return v1alpha1.PhaseFailed
	case ready.Status == metav1.ConditionTrue:
		return v1alpha1.PhaseReady
	}
	return v1alpha1.PhaseInstalling
}

// metaLeader is the meta leader a majority of the answering servers name,
// "" when none has a majority (an election, a split). Only a server of
// the cluster counts as a name: the text is a server's reply, and a name
// of its own choosing (any length, any bytes) would reach the status.
func metaLeader(stores map[string]natsmon.StoreUse) string {
	votes := map[string]int{}
	for _, u := range stores {
		if _, ours := stores[u.MetaLeader]; ours {
			votes[u.MetaLeader]++
		}
	}
	for leader, n := range votes {
		if 2*n > len(stores) {
			return leader
		}
	}
	return ""
}
