package plan

import (
	"fmt"
	"slices"
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
	// ReadyMarks are the marks a current server must report before the
	// cluster may say Ready: those of the files that decide what clients
	// meet (nats.conf, users.conf). A renewed certificate not yet loaded is
	// not among them: the old one still serves, and is still valid.
	ReadyMarks []string
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
	// Behind names the current servers that answered with an older mark
	// of one of ReadyMarks: until they load the files, a client holding
	// the credentials the operator just wrote can be refused by them.
	Behind []string
	// BehindOtherwise names the current servers that answered with every
	// one of ReadyMarks but an older other mark (a certificate).
	BehindOtherwise []string
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
		if s.Answered && !s.Outdated {
			switch {
			case !s.Marks.Have(pick(o.Want, o.ReadyMarks)):
				d.Behind = append(d.Behind, s.Name)
			case !s.Marks.Have(o.Want):
				d.BehindOtherwise = append(d.BehindOtherwise, s.Name)
			}
		}
		switch {
		case !s.Answered:
			waiting = append(waiting, s.Name+" (no answer)")
		case s.Marks.Have(o.Want):
			continue
		case s.Outdated:
			// The rollout replaces it; Ready waits for that already.
			waiting = append(waiting, s.Name+" (to be replaced by the rolling update)")
		case !o.CanReload:
			waiting = append(waiting, s.Name+" (loaded an older configuration; it is read at the next restart)")
		case s.SinceLoad >= interval:
			d.Reload = append(d.Reload, s.Name)
			waiting = append(waiting, s.Name+" (reloading)")
		default:
			retry = min(retry, interval-s.SinceLoad)
			waiting = append(waiting, s.Name+" (runs an older "+strings.Join(s.Marks.Differ(o.Want), ", ")+"; the kubelet may not have refreshed its files yet)")
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

// pick is the part of m under keys.
func pick(m Marks, keys []string) Marks {
	out := Marks{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// Differ lists, sorted, the wanted marks m does not hold.
func (m Marks) Differ(want Marks) []string {
	var out []string
	for k, v := range want {
		if m[k] != v {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
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
