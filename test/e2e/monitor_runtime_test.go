package e2e_test

import (
	"fmt"
	"slices"
	"time"
)

// varzRuntime is the part of /varz that tells one process from the next
// and shows the limits in force: start changes only with a new process,
// config_load_time with every successful reload.
type varzRuntime struct {
	ServerName     string    `json:"server_name"`
	Start          time.Time `json:"start"`
	ConfigLoadTime time.Time `json:"config_load_time"`
	MaxPayload     int64     `json:"max_payload"`
	MaxPending     int64     `json:"max_pending"`
}

// runtimeOf reads /varz of the server at ip.
func runtimeOf(ip string) (varzRuntime, error) {
	var v varzRuntime
	err := monitor(ip, "/varz", &v)
	return v, err
}

// rejoined says why server pod is not back in f's cluster yet, or nil:
// it and every other server have routes to each other, all servers agree
// on one meta leader, and that leader sees every follower current.
func rejoined(f *formed, pod string) error {
	for _, p := range f.Pods {
		var r routez
		if err := monitor(f.IP(p), "/routez", &r); err != nil {
			return err
		}
		peers := map[string]bool{}
		for _, route := range r.Routes {
			peers[route.RemoteName] = true
		}
		for _, other := range f.Pods {
			if other != p && (p == pod || other == pod) && !peers[other] {
				return fmt.Errorf("%s has no route to %s yet", p, other)
			}
		}
	}
	leaders := map[string]bool{}
	for _, p := range f.Pods {
		var j jsz
		if err := monitor(f.IP(p), "/jsz", &j); err != nil {
			return err
		}
		if j.Meta == nil || j.Meta.Leader == "" {
			return fmt.Errorf("%s knows no meta leader", p)
		}
		leaders[j.Meta.Leader] = true
	}
	if len(leaders) != 1 {
		return fmt.Errorf("servers disagree on the meta leader: %v", leaders)
	}
	var leader string
	for l := range leaders {
		leader = l
	}
	var j jsz
	if err := monitor(f.IP(leader), "/jsz", &j); err != nil {
		return err
	}
	var current []string
	for _, r := range j.Meta.Replicas {
		if r.Current && !r.Offline {
			current = append(current, r.Name)
		}
	}
	for _, p := range f.Pods {
		if p != leader && !slices.Contains(current, p) {
			return fmt.Errorf("meta leader %s sees %v current, not %s", leader, current, p)
		}
	}
	if j.Meta.Size != len(f.Pods) {
		return fmt.Errorf("meta group of %d peers, want %d", j.Meta.Size, len(f.Pods))
	}
	return nil
}
