package plan

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestReload(t *testing.T) {
	want := Marks{"config": "new", "users": "u2"}
	current := func(name string, since time.Duration) ReloadServer {
		return ReloadServer{Name: name, Answered: true, Marks: Marks{"config": "new", "users": "u2"}, SinceLoad: since}
	}
	old := func(name string, since time.Duration) ReloadServer {
		return ReloadServer{Name: name, Answered: true, Marks: Marks{"config": "old", "users": "u2"}, SinceLoad: since}
	}
	for _, tc := range []struct {
		name       string
		obs        ReloadObservation
		loaded     bool
		reload     []string
		stalled    bool
		retryAtMin time.Duration // RetryIn at least
		retryAtMax time.Duration // and at most; zero: no bound checked
		waiting    string        // a part of Waiting
	}{
		{name: "every server confirmed", loaded: true,
			obs: ReloadObservation{Want: want, CanReload: true, Servers: []ReloadServer{current("n-0", 0), current("n-1", time.Hour)}}},
		{name: "a new change: every server with old marks is reloaded at once",
			obs:    ReloadObservation{Want: want, CanReload: true, Servers: []ReloadServer{old("n-0", time.Minute), old("n-1", time.Minute), current("n-2", 0)}},
			reload: []string{"n-0", "n-1"}, retryAtMin: ReloadMinInterval, retryAtMax: ReloadMinInterval, waiting: "n-0 (reloading)"},
		{name: "the users file lags the config: not confirmed",
			obs: ReloadObservation{Want: want, CanReload: true, Servers: []ReloadServer{
				{Name: "n-0", Answered: true, Marks: Marks{"config": "new", "users": "u1"}, SinceLoad: time.Minute}}},
			reload: []string{"n-0"}, retryAtMin: ReloadMinInterval},
		{name: "a server reloaded moments ago with old files waits for the kubelet, no hot loop",
			obs:        ReloadObservation{Want: want, CanReload: true, PendingFor: 20 * time.Second, Servers: []ReloadServer{old("n-0", 2*time.Second)}},
			retryAtMin: 8 * time.Second, retryAtMax: 8 * time.Second, waiting: "n-0 (runs an older config; the kubelet may not have refreshed"},
		{name: "the interval grows with the time pending, up to the cap",
			obs:        ReloadObservation{Want: want, CanReload: true, PendingFor: 10 * time.Minute, Servers: []ReloadServer{old("n-0", 5*time.Second)}},
			stalled:    true,
			retryAtMin: ReloadMaxInterval - 5*time.Second, retryAtMax: ReloadMaxInterval - 5*time.Second, waiting: "for 10m0s"},
		{name: "stalled servers are still reloaded at the longest interval",
			obs:    ReloadObservation{Want: want, CanReload: true, PendingFor: 10 * time.Minute, Servers: []ReloadServer{old("n-0", ReloadMaxInterval)}},
			reload: []string{"n-0"}, stalled: true, retryAtMin: ReloadMaxInterval},
		{name: "an outdated server is left to the rollout",
			obs: ReloadObservation{Want: want, CanReload: true, Servers: []ReloadServer{
				{Name: "n-0", Answered: true, Outdated: true, Marks: Marks{"config": "old"}, SinceLoad: time.Hour}}},
			retryAtMin: ReloadMinInterval, waiting: "rolling update"},
		{name: "an outdated server that loaded the wanted files counts as confirmed", loaded: true,
			obs: ReloadObservation{Want: want, CanReload: true, Servers: []ReloadServer{
				{Name: "n-0", Answered: true, Outdated: true, Marks: want, SinceLoad: time.Hour}}}},
		{name: "a silent server is not confirmed",
			obs:        ReloadObservation{Want: want, CanReload: true, Servers: []ReloadServer{current("n-0", 0), {Name: "n-1"}}},
			retryAtMin: ReloadMinInterval, waiting: "n-1 (no answer)"},
		{name: "without a system user nothing is reloaded",
			obs:        ReloadObservation{Want: want, Servers: []ReloadServer{old("n-0", time.Hour)}},
			retryAtMin: ReloadMinInterval, waiting: "next restart"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Reload(tc.obs)
			if d.Loaded != tc.loaded {
				t.Fatalf("Loaded = %v, want %v (%+v)", d.Loaded, tc.loaded, d)
			}
			if !slices.Equal(d.Reload, tc.reload) {
				t.Errorf("Reload = %v, want %v", d.Reload, tc.reload)
			}
			if d.Stalled != tc.stalled {
				t.Errorf("Stalled = %v, want %v", d.Stalled, tc.stalled)
			}
			if tc.loaded {
				if d.RetryIn != 0 || d.Waiting != "" {
					t.Errorf("loaded, yet RetryIn %s, Waiting %q", d.RetryIn, d.Waiting)
				}
				return
			}
			if d.RetryIn < tc.retryAtMin || (tc.retryAtMax != 0 && d.RetryIn > tc.retryAtMax) {
				t.Errorf("RetryIn = %s, want within [%s, %s]", d.RetryIn, tc.retryAtMin, tc.retryAtMax)
			}
			if !strings.Contains(d.Waiting, tc.waiting) {
				t.Errorf("Waiting = %q, want it to say %q", d.Waiting, tc.waiting)
			}
		})
	}
}

func TestReloadInterval(t *testing.T) {
	for pending, want := range map[time.Duration]time.Duration{
		0: ReloadMinInterval, time.Second: ReloadMinInterval, 10 * time.Second: 5 * time.Second,
		40 * time.Second: ReloadMaxInterval, time.Hour: ReloadMaxInterval,
	} {
		if got := ReloadInterval(pending); got != want {
			t.Errorf("ReloadInterval(%s) = %s, want %s", pending, got, want)
		}
	}
}

// TestReloadBehind: which current servers are known to run older files (a
// client with the new credentials may be refused there) or only an older
// certificate; not one the rollout replaces, nor one that did not answer.
func TestReloadBehind(t *testing.T) {
	want := Marks{"config": "c2", "users": "u2", "cert": "2027"}
	ready := []string{"config", "users"}
	server := func(name string, m Marks) ReloadServer {
		return ReloadServer{Name: name, Answered: true, Marks: m, SinceLoad: time.Minute}
	}
	for _, tc := range []struct {
		name            string
		obs             ReloadObservation
		behind          []string
		behindOtherwise []string
	}{
		{name: "every server confirmed",
			obs: ReloadObservation{Servers: []ReloadServer{server("n-0", want)}}},
		{name: "an older users file holds Ready",
			obs:    ReloadObservation{Servers: []ReloadServer{server("n-0", want), server("n-1", Marks{"config": "c2", "users": "u1", "cert": "2027"})}},
			behind: []string{"n-1"}},
		{name: "an older nats.conf holds Ready",
			obs:    ReloadObservation{Servers: []ReloadServer{server("n-0", Marks{"config": "c1", "users": "u2", "cert": "2027"})}},
			behind: []string{"n-0"}},
		{name: "a server that never said which files it read holds Ready",
			obs:    ReloadObservation{Servers: []ReloadServer{server("n-0", Marks{})}},
			behind: []string{"n-0"}},
		{name: "a certificate not yet reloaded is behind otherwise",
			obs:             ReloadObservation{Servers: []ReloadServer{server("n-0", Marks{"config": "c2", "users": "u2", "cert": "2026"})}},
			behindOtherwise: []string{"n-0"}},
		{name: "older files and an older certificate: behind, once",
			obs:    ReloadObservation{Servers: []ReloadServer{server("n-0", Marks{"config": "c1", "users": "u2", "cert": "2026"})}},
			behind: []string{"n-0"}},
		{name: "an outdated server is the rollout's, not this",
			obs: ReloadObservation{Servers: []ReloadServer{{Name: "n-0", Answered: true, Outdated: true, Marks: Marks{"config": "c1"}}}}},
		{name: "a silent server is not known to be behind",
			obs: ReloadObservation{Servers: []ReloadServer{{Name: "n-0"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, canReload := range []bool{true, false} {
				tc.obs.Want, tc.obs.ReadyMarks, tc.obs.CanReload = want, ready, canReload
				d := Reload(tc.obs)
				if !slices.Equal(d.Behind, tc.behind) || !slices.Equal(d.BehindOtherwise, tc.behindOtherwise) {
					t.Errorf("CanReload %v: Behind = %v, BehindOtherwise = %v; want %v, %v", canReload, d.Behind, d.BehindOtherwise, tc.behind, tc.behindOtherwise)
				}
			}
		})
	}
}
