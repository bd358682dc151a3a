package plan

import (
	"sort"
)

// LeaderGroup is one stream's or consumer's Raft group as the servers
// report it.
type LeaderGroup struct {
	Account, Stream string
	// Consumer is "" for the stream's own group.
	Consumer string
	Leader   string
	// Current are the followers that are current: where leadership can
	// go without waiting for a catch-up.
	Current []string
}

// LeaderMove asks a group's leader to hand leadership to To.
type LeaderMove struct {
	Group LeaderGroup
	To    string
}

// LeaderBalance is what one balancing decision is made from.
type LeaderBalance struct {
	// Servers are the servers that may lead: every server of the cluster
	// that is ready and not going.
	Servers []string
	Groups  []LeaderGroup
	// MaxMoves bounds the moves of one step.
	MaxMoves int
}

// BalanceLeaders returns the moves that bring each server's count of
// leaders (streams and consumers together) nearer to the others', until
// no server leads more than one group above another, and the counts as
// they will be once the moves are made. It never moves two groups of one
// stream (the stream and its consumers) in one step: a stream's groups
// talk to each other through its leader, and one move at a time keeps a
// stream writable throughout. A group moves only to a current follower,
// from the server that leads the most to the one that leads the fewest
// of those it can go to. Groups led by a server that may not lead (going,
// not ready) are left to NATS' own election.
//
// Every move goes from a count to one at least two below it, which
// lowers the sum of the counts' squares: steps repeated over new
// observations end, and two servers never trade a group back and forth.
func BalanceLeaders(b LeaderBalance) ([]LeaderMove, map[string]int) {
	counts := make(map[string]int, len(b.Servers))
	for _, s := range b.Servers {
		counts[s] = 0
	}
	for _, g := range b.Groups {
		if _, ok := counts[g.Leader]; ok {
			counts[g.Leader]++
		}
	}
	// Look at groups in a fixed order, so that the same observation gives
	// the same moves.
	groups := append([]LeaderGroup(nil), b.Groups...)
	sort.Slice(groups, func(i, j int) bool { return groupKey(groups[i]) < groupKey(groups[j]) })
	moved := map[string]bool{} // stream (account/stream) moved this step
	var moves []LeaderMove
	for len(moves) < b.MaxMoves {
		move, ok := nextMove(groups, counts, moved)
		if !ok {
			break
		}
		moves = append(moves, move)
		counts[move.Group.Leader]--
		counts[move.To]++
		moved[move.Group.Account+"/"+move.Group.Stream] = true
	}
	return moves, counts
}

// nextMove is one move from a server with the highest count to a current
// follower with a count at least two below it, the lowest such; false
// when there is none.
func nextMove(groups []LeaderGroup, counts map[string]int, moved map[string]bool) (LeaderMove, bool) {
	best, found := LeaderMove{}, false
	bestGain := 0
	for _, g := range groups {
		from, ok := counts[g.Leader]
		if !ok || moved[g.Account+"/"+g.Stream] {
			continue
		}
		for _, to := range g.Current {
			n, ok := counts[to]
			if !ok || to == g.Leader || from-n < 2 {
				continue
			}
			// Prefer the move from the most loaded to the least loaded.
			if gain := from - n; gain > bestGain || (gain == bestGain && from > counts[best.Group.Leader]) {
				best, bestGain, found = LeaderMove{Group: g, To: to}, gain, true
			}
		}
	}
	return best, found
}

func groupKey(g LeaderGroup) string {
	return g.Account + "\x00" + g.Stream + "\x00" + g.Consumer
}
