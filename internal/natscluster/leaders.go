package natscluster

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/servers"
)

// maxLeaderMoves bounds the leaders one pass moves: each move is a Raft
// election of a moment, and the next pass looks at the result first.
const maxLeaderMoves = 4

// balanceLeaders counts the stream and consumer groups each server leads
// and, with spec.jetstream.balanceLeaders, moves the leaders of the
// application account's groups as plan.BalanceLeaders says: only on a
// settled cluster (called once a pass found nothing to roll, no server
// hung, every group current), each move a step-down to a preferred
// current follower. It returns the counts as the servers reported them
// (nil when they were not all read, or the cluster was not settled), and
// how the balance stands.
func (r *Reconciler) balanceLeaders(ctx context.Context, c *v1alpha1.NatsCluster, pods []corev1.Pod) ([]v1alpha1.ServerLeaders, leaderBalance) {
	if !c.Spec.JetStreamEnabled() || !c.Spec.JetStream.BalancesLeaders() || c.Spec.ReplicaCount() < 3 || len(pods) < 3 {
		return nil, leadersBalanced
	}
	var ready []string
	for i := range pods {
		if servers.PodReady(&pods[i]) && pods[i].DeletionTimestamp.IsZero() {
			ready = append(ready, pods[i].Name)
		}
	}
	views := r.jetStreamViews(ctx, c, pods)
	for _, v := range views {
		if v == nil {
			return nil, leadersNotNow
		}
	}
	groups := leaderGroups(views)
	observed := countLeaders(groups, pods)
	// Moves only between servers that are all ready, on a cluster whose
	// every group is current, and for the one account the operator has a
	// user in (mode jwt's accounts are the account controller's).
	if c.HasTrust() {
		return observed, leadersBalanced
	}
	// Counted only on a settled cluster: a count in the status is one a
	// balance answered to.
	if len(ready) != len(pods) || natsmon.Unsettled(views) != "" {
		return nil, leadersNotNow
	}
	var movable []plan.LeaderGroup
	for _, g := range groups {
		if g.Account == render.AppAccount {
			movable = append(movable, g)
		}
	}
	moves, _ := plan.BalanceLeaders(plan.LeaderBalance{Servers: ready, Groups: movable, MaxMoves: maxLeaderMoves})
	if len(moves) == 0 {
		return observed, leadersBalanced
	}
	if err := r.moveLeaders(ctx, c, pods, moves); err != nil {
		r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, "LeaderBalanceFailed", "BalanceLeaders", "%v", err)
		return observed, leadersNotNow
	}
	var what []string
	for _, m := range moves {
		what = append(what, fmt.Sprintf("%s %s -> %s", groupName(m.Group), m.Group.Leader, m.To))
	}
	r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "LeadersBalanced", "BalanceLeaders", "moved %d leaders: %s", len(moves), strings.Join(what, ", "))
	return observed, leadersMoved
}

// leaderBalance is how a balance stands after a pass.
type leaderBalance int

const (
	// leadersBalanced: nothing left to move (or nothing the operator may
	// move); done until the next occasion.
	leadersBalanced leaderBalance = iota
	// leadersMoved: leaders were moved; look again soon.
	leadersMoved
	// leadersNotNow: the cluster is not settled, or a move failed; a
	// pass a few seconds later tries again.
	leadersNotNow
)

// moveLeaders asks each group's leader to step down to the move's
// server, as the application user: a stream's API is its account's.
func (r *Reconciler) moveLeaders(ctx context.Context, c *v1alpha1.NatsCluster, pods []corev1.Pod, moves []plan.LeaderMove) error {
	a, err := r.Servers.Access(ctx, c)
	if err != nil {
		return err
	}
	creds, err := r.appCredentials(ctx, c)
	if err != nil {
		return err
	}
	nc, err := a.ConnectAs(pods, creds, "kubenats-leaders", jetstream.MaxSystemAnswer)
	if err != nil {
		return err
	}
	defer nc.Close()
	for _, m := range moves {
		subject := "$JS.API.STREAM.LEADER.STEPDOWN." + m.Group.Stream
		if m.Group.Consumer != "" {
			subject = "$JS.API.CONSUMER.LEADER.STEPDOWN." + m.Group.Stream + "." + m.Group.Consumer
		}
		if err := apiRequest(ctx, nc, subject, map[string]any{"placement": map[string]string{"preferred": m.To}}); err != nil {
			return fmt.Errorf("moving the leader of %s to %s: %w", groupName(m.Group), m.To, err)
		}
	}
	return nil
}

// appCredentials are the application user's, from the credentials Secret
// the operator keeps for c.
func (r *Reconciler) appCredentials(ctx context.Context, c *v1alpha1.NatsCluster) (nats.Option, error) {
	s, err := r.ownedSecret(ctx, c, c.CredentialsSecretName())
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("no credentials Secret %s yet", c.CredentialsSecretName())
	}
	if tok := string(s.Data[render.CredentialsTokenKey]); tok != "" {
		return nats.Token(tok), nil
	}
	if user := string(s.Data[render.CredentialsUserKey]); user != "" {
		return nats.UserInfo(user, string(s.Data[render.CredentialsPasswordKey])), nil
	}
	return func(*nats.Options) error { return nil }, nil // auth none
}

// leaderGroups are the groups the views report, each once, as its
// leader's own view has it (the followers' currency is the leader's to
// say). A name that cannot be a subject token is left out: it came from
// a server, and goes into a request subject.
func leaderGroups(views map[string]*natsmon.JSInfo) []plan.LeaderGroup {
	byKey := map[string]plan.LeaderGroup{}
	add := func(server, account, stream, consumer string, g *natsmon.Group) {
		if g == nil || g.Leader == "" || !subjectToken(stream) || (consumer != "" && !subjectToken(consumer)) {
			return
		}
		key := account + "\x00" + stream + "\x00" + consumer
		if _, seen := byKey[key]; seen && g.Leader != server {
			return
		}
		lg := plan.LeaderGroup{Account: account, Stream: stream, Consumer: consumer, Leader: g.Leader}
		for _, p := range g.Replicas {
			if p.Current && !p.Offline {
				lg.Current = append(lg.Current, p.Name)
			}
		}
		byKey[key] = lg
	}
	for server, v := range views {
		for _, acc := range v.Accounts {
			for _, st := range acc.Streams {
				add(server, acc.Name, st.Name, "", st.Cluster)
				for _, co := range st.Consumers {
					add(server, acc.Name, st.Name, co.Name, co.Cluster)
				}
			}
		}
	}
	out := make([]plan.LeaderGroup, 0, len(byKey))
	for _, g := range byKey {
		out = append(out, g)
	}
	return out
}

// countLeaders counts the groups each server of pods leads, every server
// listed (a server that leads none too), in the status' order.
func countLeaders(groups []plan.LeaderGroup, pods []corev1.Pod) []v1alpha1.ServerLeaders {
	counts := make(map[string]int32, len(pods))
	for i := range pods {
		counts[pods[i].Name] = 0
	}
	for _, g := range groups {
		if _, ok := counts[g.Leader]; ok {
			counts[g.Leader]++
		}
	}
	out := make([]v1alpha1.ServerLeaders, 0, len(counts))
	for s, n := range counts {
		out = append(out, v1alpha1.ServerLeaders{Server: s, Groups: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Server < out[j].Server })
	return out
}

func groupName(g plan.LeaderGroup) string {
	if g.Consumer != "" {
		return "consumer " + g.Stream + "/" + g.Consumer
	}
	return "stream " + g.Stream
}

// subjectToken reports whether name is one token of a subject.
func subjectToken(name string) bool {
	return name != "" && !strings.ContainsAny(name, ".*> \t\r\n")
}

// leaderRounds remembers, by cluster, the occasion of the last balance
// that found nothing to move: the set of server pods (a rollout, a
// scale-up or a restart makes a new set) and the request annotation. The
// servers' views are read for a balance only on a new occasion, not on
// every pass of an idle cluster: a view lists every stream and consumer.
// An operator restart balances once more.
type leaderRounds struct {
	mu   sync.Mutex
	done map[types.UID]string
}

// occasion names what a balance would answer to.
func leaderOccasion(c *v1alpha1.NatsCluster, pods []corev1.Pod) string {
	uids := make([]string, 0, len(pods))
	for i := range pods {
		uids = append(uids, string(pods[i].UID))
	}
	sort.Strings(uids)
	return strings.Join(uids, ",") + "|" + c.Annotations[v1alpha1.AnnotationBalanceLeaders]
}

func (l *leaderRounds) due(c *v1alpha1.NatsCluster, occasion string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.done[c.UID] != occasion
}

func (l *leaderRounds) finished(c *v1alpha1.NatsCluster, occasion string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done == nil {
		l.done = map[types.UID]string{}
	}
	l.done[c.UID] = occasion
}

func (l *leaderRounds) forget(uid types.UID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.done, uid)
}
