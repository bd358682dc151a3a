package plan

import (
	"fmt"
	"strings"
	"time"
)

// Marks are what a server reports it loaded: the revision of each config
// file, by server metadata key.
type Marks map[string]string

// ReloadServer is one server as the reload decision sees it.
type ReloadServer struct {
	Name string
	// Answered: the server told what it loaded (Marks, SinceLoad).
	Answered bool
	Marks    Marks
	// SinceLoad is how long ago the server (re)loaded its config, by its
	// own clock.
	SinceLoad time.Duration
	// Outdated: its pod runs an older template; the rollout replaces it,
	// and a reload could not apply what needs the restart.
	Outdated bool
}

// ReloadObservation is what one reload decision is made from.
type ReloadObservation struct {
	Want    Marks
	Servers []ReloadServer
	// PendingFor is how long Want has been the wanted configuration
	// without every server confirming it.
	PendingFor time.Duration
	// CanReload: the operator has a way to reload the servers (a system
	// user); without one a server that loaded an old file waits for its
	// restart.
	CanReload bool
}

// ReloadDecision is what to do now, and what to tell.
type ReloadDecision struct {
	// Loaded: every server confirmed Want.
	Loaded bool
	// Reload names the servers to send a reload now.
	Reload []string
	// Waiting says which servers have not confirmed, and why.
	Waiting string
	// Stalled: it has been pending longer than ReloadStallAfter.
	Stalled bool
	// RetryIn is when to look again; zero when Loaded.
	RetryIn time.Duration
}

// Reload timing. The kubelet refreshes a mounted ConfigMap or Secret up to
// its sync period (a minute) plus its cache's lag after the object
// changed, so a reload sent at once usually rereads the old files: the
// server then still reports the old marks, and the reload is sent again,
// further apart the longer it has been pending (half the time pending,
// between ReloadMinInterval and ReloadMaxInterval), so a slow kubelet costs
// a dozen cheap reloads, never a hot loop. Past ReloadStallAfter the wait
// is reported as stalled, and the reloads go on at the longest interval.
const (
	ReloadMinInterval = time.Second
	ReloadMaxInterval = 20 * time.Second
	ReloadStallAfter  = 3 * time.Minute
)

// ReloadInterval is the least time between two loads of one server while a
// change has been pending for pending.
func ReloadInterval(pending time.Duration) time.Duration {
	return min(max(pending/2, ReloadMinInterval), ReloadMaxInterval)
}

// Reload decides which servers to reload: those that answered with other
// marks than wanted, whose pod is current, and that have not loaded their
// config within ReloadInterval. A server that confirmed is left alone, an
// outdated one waits for the rollout, a silent one for its answer.
func Reload(o ReloadObservation) ReloadDecision {
	interval := ReloadInterval(o.PendingFor)
	var d ReloadDecision
	var waiting []string
	retry := interval
	for _, s := range o.Servers {
		switch {
		case !s.Answered:
			waiting = append(waiting, s.Name+" (no answer)")
		case s.Marks.Have(o.Want):
			continue
		case s.Outdated:
			waiting = append(waiting, s.Name+" (to be replaced by the rolling update)")
		case !o.CanReload:
			waiting = append(waiting, s.Name+" (loaded an older configuration; it is read at the next restart)")
		case s.SinceLoad >= interval:
			d.Reload = append(d.Reload, s.Name)
			waiting = append(waiting, s.Name+" (reloading)")
		default:
			retry = min(retry, interval-s.SinceLoad)
			waiting = append(waiting, s.Name+" (runs an older configuration; the kubelet may not have refreshed its files yet)")
		}
	}
	if len(waiting) == 0 {
		return ReloadDecision{Loaded: true}
	}
	d.Waiting = "waiting for servers to load the current configuration: " + strings.Join(waiting, ", ")
	d.Stalled = o.PendingFor >= ReloadStallAfter
	if d.Stalled {
		d.Waiting = fmt.Sprintf("for %s, %s", o.PendingFor.Round(time.Second), d.Waiting)
	}
	d.RetryIn = max(retry, ReloadMinInterval)
	return d
}

// Have reports whether m holds every wanted mark.
func (m Marks) Have(want Marks) bool {
	for k, v := range want {
		if m[k] != v {
			return false
		}
	}
	return true
}
