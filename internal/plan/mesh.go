package plan

import (
	"fmt"
	"time"
)

// MeshPolicy is a PeerAuthentication mode as Istio spells it; "" is no
// policy at all.
type MeshPolicy string

const (
	NoPolicy   MeshPolicy = ""
	Permissive MeshPolicy = "PERMISSIVE"
	Strict     MeshPolicy = "STRICT"
)

// MeshPod is one server pod as the mesh sees it.
type MeshPod struct {
	Name string
	// Injected: Istio's injector gave the pod a sidecar (its
	// sidecar.istio.io/status annotation).
	Injected bool
	// ProxyReady: the istio-proxy container, or the native sidecar init
	// container, is ready.
	ProxyReady  bool
	Ready       bool
	Terminating bool
	// Outdated: it runs an older template than the StatefulSet's; the
	// rollout will replace it.
	Outdated bool
}

// MeshObservation is what one mesh decision is made from.
type MeshObservation struct {
	// Enabled: spec.mesh.istio is set; Target is its mode.
	Enabled bool
	Target  MeshPolicy
	// Installed: the API server serves Istio's PeerAuthentication.
	Installed bool
	// Generation of the NatsCluster's spec.
	Generation int64
	// Policy is the live PeerAuthentication's mode, and
	// RolledBackGeneration the generation STRICT was rolled back for and
	// RolledBackFor the kind of fault it was rolled back for, as recorded
	// on it.
	Policy               MeshPolicy
	RolledBackGeneration int64
	RolledBackFor        MeshFault
	// StatefulSetExists and TemplateSidecars: the live StatefulSet, and
	// whether its pod template asks for sidecars.
	StatefulSetExists bool
	TemplateSidecars  bool
	// Want is the number of servers the spec asks for.
	Want int
	Pods []MeshPod
	// MissingRoute names two servers without a route between them;
	// Unsettled what keeps JetStream from being settled. "" when all is
	// well (or when there is nothing to check).
	MissingRoute string
	Unsettled    string
	// Silent names a server that did not answer when asked for its routes
	// (hung, or too busy), "" when all did.
	Silent string
	// UnhealthyFor is how long the cluster has been in trouble under
	// STRICT (MeshStep.Unhealthy of the earlier passes); RollbackAfter is
	// how long the operator bears it before going back to PERMISSIVE.
	UnhealthyFor  time.Duration
	RollbackAfter time.Duration
	// AutomaticRollback: the spec lets the operator loosen STRICT by
	// itself (spec.mesh.istio.rollback: Automatic). Without it, trouble
	// under STRICT is reported and the policy stays.
	AutomaticRollback bool
	// PolicyUnchangedFor is how long the live policy has been as the
	// operator last wrote it; PushAllowance is how long istiod may take
	// to push a change of it to every sidecar. Until then the sidecars
	// may still enforce the mode before.
	PolicyUnchangedFor time.Duration
	PushAllowance      time.Duration
}

// MeshStep is what the mesh should look like after this pass.
type MeshStep struct {
	// Policy is the PeerAuthentication mode to have, NoPolicy to have none.
	Policy MeshPolicy
	// Sidecars: the pod template asks for sidecars.
	Sidecars bool
	// RolledBackGeneration and RolledBackFor are recorded on the policy.
	RolledBackGeneration int64
	RolledBackFor        MeshFault
	// Condition is MeshReady; Reason "" means no condition at all (a
	// cluster outside the mesh, with nothing of it left).
	Ready   bool
	Reason  string
	Message string
	// Unhealthy says why the cluster is in trouble under STRICT now; the
	// controller times it for UnhealthyFor.
	Unhealthy string
}

// MeshFault is the kind of trouble under STRICT that the mesh itself
// causes, and PERMISSIVE relieves; "" is trouble of any other kind.
type MeshFault string

const (
	// FaultSidecar: a server has no sidecar, or its sidecar is not ready
	// while its pod stays. PERMISSIVE shows it too: once every server has
	// a ready sidecar again, the fault is gone.
	FaultSidecar MeshFault = "sidecar"
	// FaultRoutes: two servers, both ready with ready sidecars, have no
	// route between them. Only STRICT shows whether it holds again.
	FaultRoutes MeshFault = "routes"
)

// MeshReady reasons (the API's names).
const (
	reasonIstioNotInstalled  = "IstioNotInstalled"
	reasonWaitingForSidecars = "WaitingForSidecars"
	reasonPermissive         = "Permissive"
	reasonStrict             = "Strict"
	reasonRolledBack         = "RolledBack"
	reasonStrictUnhealthy    = "StrictUnhealthy"
	reasonDisabling          = "Disabling"
)

// Mesh decides the next stage of a cluster's way into the mesh or out of it:
//   - in: the policy comes first, PERMISSIVE; only then does the pod
//     template ask for sidecars (a new cluster gets both at once: its
//     policy is applied before its StatefulSet), and the rollout replaces
//     the servers one at a time; STRICT only once every server has a ready
//     sidecar, every route is up and JetStream is settled. Never straight
//     from no policy to STRICT;
//   - under STRICT: only a fault of the mesh (MeshFault) counts towards a
//     rollback: a server without a sidecar cannot route (its peers refuse
//     its plaintext), at once; a sidecar not ready, or a route missing
//     between two ready servers, for RollbackAfter outside a rollout.
//     Trouble of the servers' own (one not ready while its sidecar is,
//     JetStream unsettled) is reported and never loosens mTLS: PERMISSIVE
//     would not cure it, and servers can be made to look unhealthy by
//     anyone with a client (lagging a follower keeps JetStream
//     unsettled). Only a spec that opts in (AutomaticRollback) lets a
//     mesh fault send the policy back to PERMISSIVE, recorded with the
//     spec's generation and the fault's kind; otherwise the policy stays
//     STRICT and the step reports the fault (StrictUnhealthy): loosening
//     mTLS is the platform's call;
//   - after a rollback: PERMISSIVE while the fault is there. A sidecar
//     fault shows under PERMISSIVE too: once every server has a ready
//     sidecar, every route is up and JetStream is settled, the rollback
//     clears and STRICT follows, with no change of the spec. A route fault
//     shows only under STRICT, so trying again would only break the routes
//     again: that rollback holds until the spec changes;
//   - out: PERMISSIVE first, then, once istiod has had PushAllowance to
//     push it to every sidecar, the template without sidecars, rolled
//     out; the policy goes once no server has a sidecar left.
func Mesh(o MeshObservation) MeshStep {
	if !o.Enabled {
		return o.disable()
	}
	if !o.Installed {
		return MeshStep{Sidecars: o.TemplateSidecars, Reason: reasonIstioNotInstalled,
			Message: "spec.mesh.istio is set, but the API server does not serve Istio's PeerAuthentication (security.istio.io/v1): install Istio; nothing of the mesh is rendered until then"}
	}
	step := MeshStep{Policy: Permissive, Sidecars: o.TemplateSidecars || o.Policy != NoPolicy || !o.StatefulSetExists}
	if o.Policy == Strict {
		if s := o.serverWithoutSidecar(); s != "" {
			return o.rollback(step, FaultSidecar, "server "+s+" has no sidecar, and its peers refuse its plaintext under STRICT")
		}
	}
	missing := o.missingSidecar(step.Sidecars)
	if o.RolledBackGeneration != 0 && o.RolledBackGeneration == o.Generation && o.Policy != Strict {
		if held, ok := o.rolledBack(step, missing); ok {
			return held
		}
	}
	if o.Target == Permissive {
		if missing != "" {
			return waitingForSidecars(step, missing)
		}
		step.Ready, step.Reason, step.Message = true, reasonPermissive, "every server has a ready sidecar; mTLS PERMISSIVE as asked"
		return step
	}
	if o.Policy == Strict {
		return o.strict(step, missing)
	}
	if o.Policy != Permissive && missing == "" {
		missing = "the PERMISSIVE policy is not in place yet"
	}
	if why := o.notYetStrict(missing); why != "" {
		return waitingForSidecars(step, why+"; STRICT follows")
	}
	step.Policy, step.Ready, step.Reason = Strict, true, reasonStrict
	step.Message = "every server has a ready sidecar, every route is up and JetStream is settled: mTLS STRICT"
	return step
}

// strict keeps STRICT while the cluster holds, and rolls back when it has
// been in trouble for too long.
func (o MeshObservation) strict(step MeshStep, missing string) MeshStep {
	trouble := missing
	if trouble == "" {
		trouble = o.notYetStrict("")
	}
	step.Policy, step.Reason = Strict, reasonStrict
	if trouble == "" {
		step.Ready, step.Message = true, "every server has a ready sidecar, every route is up and JetStream is settled: mTLS STRICT"
		return step
	}
	step.Message = "under STRICT, " + trouble
	if o.disrupted() {
		return step // a rollout or a scale: its own gate waits for the cluster
	}
	fault, why := o.meshFault()
	if fault == "" {
		step.Message += "; not a fault of the mesh (every server that runs has a ready sidecar): the policy stays STRICT"
		return step
	}
	step.Unhealthy = why
	if o.UnhealthyFor >= o.RollbackAfter {
		return o.rollback(step, fault, fmt.Sprintf("%s for %s", why, o.UnhealthyFor.Round(time.Second)))
	}
	step.Message = "under STRICT, " + why
	next := "back to PERMISSIVE"
	if !o.AutomaticRollback {
		next = "reported"
	}
	step.Message += fmt.Sprintf(" (for %s; %s after %s)", o.UnhealthyFor.Round(time.Second), next, o.RollbackAfter)
	return step
}

// rollback goes back to PERMISSIVE for a mesh fault, when the spec allows
// it; otherwise it keeps STRICT and reports.
func (o MeshObservation) rollback(step MeshStep, fault MeshFault, why string) MeshStep {
	if !o.AutomaticRollback {
		step.Policy, step.Ready, step.Reason = Strict, false, reasonStrictUnhealthy
		step.Message = "under STRICT, " + why + "; the policy stays STRICT (spec.mesh.istio.rollback: Report): fix the cause, or set rollback: Automatic to let the operator go back to PERMISSIVE"
		return step
	}
	step.Policy, step.Ready, step.Unhealthy = Permissive, false, ""
	step.RolledBackGeneration, step.RolledBackFor, step.Reason = o.Generation, fault, reasonRolledBack
	step.Message = "back to PERMISSIVE: " + why + "; " + retryWhen(fault)
	return step
}

// rolledBack holds a rollback while its fault may still be there, and
// says so (ok); once a sidecar fault is gone it lets go (not ok), and the
// way to STRICT continues as for a cluster that was never rolled back.
func (o MeshObservation) rolledBack(step MeshStep, missing string) (MeshStep, bool) {
	step.RolledBackGeneration, step.RolledBackFor, step.Reason = o.RolledBackGeneration, o.RolledBackFor, reasonRolledBack
	if o.RolledBackFor == FaultSidecar {
		why := o.notYetStrict(missing)
		if why == "" {
			return MeshStep{}, false
		}
		step.Message = "STRICT was rolled back to PERMISSIVE for a sidecar fault; " + retryWhen(FaultSidecar) + ": " + why
		return step, true
	}
	// A route fault, or a rollback recorded before faults had kinds.
	step.Message = "STRICT was rolled back to PERMISSIVE for this spec; " + retryWhen(FaultRoutes)
	return step, true
}

// retryWhen says when STRICT is tried again after a rollback for fault.
func retryWhen(fault MeshFault) string {
	if fault == FaultSidecar {
		return "STRICT is tried again once every server has a ready sidecar, every route is up and JetStream is settled"
	}
	return "only STRICT shows whether the routes would hold, so it is tried again after the next change of the spec"
}

// meshFault is the trouble under STRICT that is the mesh's, and its kind;
// "" when the trouble is the servers' own. A sidecar that is not ready
// takes its server's ports with it; a route can be missing only between
// servers that were all ready with ready sidecars (the routes are looked
// at only then, nearStrict), so nothing but the mesh stands between them,
// unless one of them did not even answer (a server that hangs: its own
// trouble, which its readiness probe soon tells).
func (o MeshObservation) meshFault() (MeshFault, string) {
	for _, p := range o.Pods {
		if !p.Terminating && p.Injected && !p.ProxyReady {
			return FaultSidecar, "the sidecar of server " + p.Name + " is not ready"
		}
	}
	if o.MissingRoute != "" && o.Silent == "" {
		return FaultRoutes, "waiting for the routes: " + o.MissingRoute
	}
	return "", ""
}

func waitingForSidecars(step MeshStep, why string) MeshStep {
	step.Reason, step.Message = reasonWaitingForSidecars, "PERMISSIVE: "+why
	return step
}

// notYetStrict is what keeps the cluster from STRICT, given missing.
func (o MeshObservation) notYetStrict(missing string) string {
	switch {
	case missing != "":
		return missing
	case o.MissingRoute != "":
		return "waiting for the routes: " + o.MissingRoute
	case o.Unsettled != "":
		return "waiting for JetStream to settle: " + o.Unsettled
	}
	return ""
}

// missingSidecar names the first server that is not yet in the mesh with
// a ready sidecar, or what else is missing; "" when all are.
func (o MeshObservation) missingSidecar(templateSidecars bool) string {
	if !templateSidecars {
		return "the servers get their sidecars once the PERMISSIVE policy is in place"
	}
	if len(o.Pods) < o.Want {
		return fmt.Sprintf("waiting for %d of %d servers to exist", o.Want-len(o.Pods), o.Want)
	}
	for _, p := range o.Pods {
		switch {
		case p.Terminating:
			return "server " + p.Name + " is being replaced"
		case p.Outdated:
			return "server " + p.Name + " waits for its turn in the rolling update"
		case !p.Injected:
			return "server " + p.Name + " has no sidecar"
		case !p.ProxyReady:
			return "the sidecar of server " + p.Name + " is not ready"
		case !p.Ready:
			return "server " + p.Name + " is not ready"
		}
	}
	return ""
}

// serverWithoutSidecar is the first running server of the current
// template that Istio did not inject.
func (o MeshObservation) serverWithoutSidecar() string {
	for _, p := range o.Pods {
		if !p.Terminating && !p.Outdated && !p.Injected {
			return p.Name
		}
	}
	return ""
}

// disrupted: servers are being replaced or added, which the rollout's own
// gate watches; trouble then is expected and not the mesh's doing.
func (o MeshObservation) disrupted() bool {
	if len(o.Pods) != o.Want {
		return true
	}
	for _, p := range o.Pods {
		if p.Terminating || p.Outdated {
			return true
		}
	}
	return false
}

// disable takes the cluster out of the mesh: PERMISSIVE first, then the
// sidecars roll out, then the policy goes.
func (o MeshObservation) disable() MeshStep {
	injected := ""
	for _, p := range o.Pods {
		if p.Injected {
			injected = p.Name
			break
		}
	}
	if !o.Installed {
		// No policy can exist; nothing but the sidecars to take away.
		if injected == "" {
			return MeshStep{}
		}
		return MeshStep{Reason: reasonDisabling, Message: "spec.mesh.istio was removed: server " + injected + " still has a sidecar"}
	}
	if injected == "" && !o.TemplateSidecars && o.Policy == NoPolicy {
		return MeshStep{}
	}
	// PERMISSIVE must be in force on every sidecar, not only in the
	// object, before a server without a sidecar starts: sidecars still
	// enforcing STRICT refuse its plaintext routes.
	pushing := o.Policy == Permissive && o.PolicyUnchangedFor < o.PushAllowance
	step := MeshStep{Policy: Permissive, Sidecars: o.TemplateSidecars && (o.Policy != Permissive || pushing), Reason: reasonDisabling}
	switch {
	case step.Sidecars && o.Policy == Permissive:
		step.Message = fmt.Sprintf("spec.mesh.istio was removed: PERMISSIVE for %s; the sidecars go once istiod has had %s to push it to every sidecar",
			o.PolicyUnchangedFor.Round(time.Second), o.PushAllowance)
	case step.Sidecars:
		step.Message = "spec.mesh.istio was removed: PERMISSIVE first, then the sidecars go"
	case injected != "":
		step.Message = "spec.mesh.istio was removed: PERMISSIVE while the sidecars roll out; server " + injected + " still has one"
	default:
		return MeshStep{} // no sidecar left: the policy goes
	}
	return step
}
