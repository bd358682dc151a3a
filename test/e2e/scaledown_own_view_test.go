package e2e_test

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// What a server holds, in its own words, at the instant its pod's deletion
// reaches the kubelet: the evidence that a scale-down removed a server
// only once it held nothing. A look from the other servers (stream and
// consumer info through the JetStream API) can only be taken before or
// after that instant, and around a meta leader step-down it may be seconds
// away from it; the server's own monitoring endpoint, read before the
// kubelet runs its preStop hook (the lame duck mode that hands its
// leaderships away) or sends it any signal, is what it held when it was
// deleted.

// ownViewQuery lists every stream and consumer the server hosts a replica
// of (leader or follower; nats-server lists only the ones running on it,
// an R1 too, which has no Raft group of its own) and the meta leader as
// it sees it.
const ownViewQuery = "/jsz?accounts=true&streams=true&consumers=true&raft=true"

// ownHoldings is what one server says it holds.
type ownHoldings struct {
	// groups are its streams and consumers, named as raftGroup names them,
	// each with its Raft group and peers as the server reports them.
	groups []string
	detail []string
	// metaLeader is the meta leader as the server sees it, "" for none.
	metaLeader string
}

// readOwnHoldings asks the server at ip what it holds, bounded by the
// monitoring client's timeout (5 s).
func readOwnHoldings(ip string) (ownHoldings, error) {
	if ip == "" {
		return ownHoldings{}, fmt.Errorf("it holds no address")
	}
	var j struct {
		Meta *struct {
			Leader string `json:"leader"`
		} `json:"meta_cluster"`
		Accounts []struct {
			Name    string `json:"name"`
			Streams []struct {
				Name      string        `json:"name"`
				RaftGroup string        `json:"stream_raft_group"`
				Cluster   *ownViewPeers `json:"cluster"`
				Consumers []struct {
					Name    string        `json:"name"`
					Cluster *ownViewPeers `json:"cluster"`
				} `json:"consumer_detail"`
			} `json:"stream_detail"`
		} `json:"account_details"`
	}
	if err := monitor(ip, ownViewQuery, &j); err != nil {
		return ownHoldings{}, err
	}
	var h ownHoldings
	if j.Meta != nil {
		h.metaLeader = j.Meta.Leader
	}
	type held struct{ name, detail string }
	var all []held
	for _, acc := range j.Accounts {
		for _, st := range acc.Streams {
			g := raftGroup{stream: st.Name}.String()
			all = append(all, held{g, fmt.Sprintf("%s (account %s, raft group %q, %s)", g, acc.Name, st.RaftGroup, st.Cluster)})
			for _, c := range st.Consumers {
				g := raftGroup{stream: st.Name, consumer: c.Name}.String()
				all = append(all, held{g, fmt.Sprintf("%s (%s)", g, c.Cluster)})
			}
		}
	}
	sort.Slice(all, func(i, k int) bool { return all[i].name < all[k].name })
	for _, x := range all {
		h.groups = append(h.groups, x.name)
		h.detail = append(h.detail, x.detail)
	}
	return h, nil
}

// ownViewPeers is a group's leader and replicas as the server reports them.
type ownViewPeers struct {
	Leader   string `json:"leader"`
	Replicas []struct {
		Name    string `json:"name"`
		Current bool   `json:"current"`
	} `json:"replicas"`
}

func (p *ownViewPeers) String() string {
	if p == nil {
		return "no cluster info"
	}
	var rs []string
	for _, r := range p.Replicas {
		rs = append(rs, fmt.Sprintf("%s current=%v", r.Name, r.Current))
	}
	return fmt.Sprintf("leader %q, replicas [%s]", p.Leader, strings.Join(rs, ", "))
}

// deletionViews are the servers' own views taken as their pods' deletion
// reached the loopback kubelet, by pod UID.
type deletionViews struct {
	mu    sync.Mutex
	byUID map[types.UID]deletionView
}

type deletionView struct {
	name     string
	at       time.Time // the kubelet began the termination and asked
	answered time.Time
	holdings ownHoldings
	err      error
}

// recordDeletionViews has the kubelet read each of ns's servers' own view
// when it begins terminating its pod, before the preStop hook and any
// signal, until the test ends. The kubelet waits for the read (5 s at
// most), so nothing about the server changes meanwhile.
func recordDeletionViews(t *testing.T, ns string) *deletionViews {
	v := &deletionViews{byUID: map[types.UID]deletionView{}}
	remove := cluster.OnTerminating(func(pod *corev1.Pod) {
		if pod.Namespace != ns {
			return
		}
		at := time.Now()
		h, err := readOwnHoldings(cluster.PodIP(pod.Namespace, pod.Name))
		v.mu.Lock()
		defer v.mu.Unlock()
		v.byUID[pod.UID] = deletionView{name: pod.Name, at: at, answered: time.Now(), holdings: h, err: err}
	})
	t.Cleanup(remove)
	return v
}

// heldNothing checks what the server of pod d said it held when its pod's
// termination began: no stream or consumer replica and not the meta
// leadership. A view that was never taken or not answered fails: what
// cannot be seen is not taken for nothing.
func (v *deletionViews) heldNothing(d deletion) error {
	v.mu.Lock()
	view, ok := v.byUID[d.uid]
	v.mu.Unlock()
	switch {
	case !ok:
		return fmt.Errorf("%s was deleted, but its own view was never taken as its pod's termination began", d.name)
	case view.err != nil:
		return fmt.Errorf("%s did not say what it held as its pod's termination began (%s, within %s): %v",
			d.name, ownViewQuery, monitorClient.Timeout, view.err)
	case len(view.holdings.groups) > 0:
		return fmt.Errorf("%s was deleted while it held %v: its own %s as its pod's termination began (%s after the watch saw the deletion):\n  %s",
			d.name, view.holdings.groups, ownViewQuery, view.at.Sub(d.at).Round(time.Millisecond), strings.Join(view.holdings.detail, "\n  "))
	case view.holdings.metaLeader == d.name:
		return fmt.Errorf("%s was deleted while it was the meta leader: its own %s as its pod's termination began", d.name, ownViewQuery)
	}
	return nil
}

// describe is the view taken at d's deletion, for the log.
func (v *deletionViews) describe(d deletion) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	view := v.byUID[d.uid]
	return fmt.Sprintf("%s's own view: taken %s after the watch saw its deletion, answered in %s; meta leader %q, holding %v",
		d.name, view.at.Sub(d.at).Round(time.Millisecond), view.answered.Sub(view.at).Round(time.Millisecond), view.holdings.metaLeader, view.holdings.groups)
}
