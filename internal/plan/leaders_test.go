package plan

import (
	"fmt"
	"testing"
)

// TestBalanceLeaders: leaders piled on one server are spread until no
// server leads two more than another, each move to a current follower,
// never two groups of one stream in a step. Careless balancers it
// catches: one that moves to any replica (the follower that is behind
// would take over), one that moves a stream and its consumer together,
// one that moves between counts one apart (the two servers would trade a
// group back and forth forever), one that counts a going server as a
// place to lead.
func TestBalanceLeaders(t *testing.T) {
	servers := []string{"n-0", "n-1", "n-2"}
	stream := func(name, leader string, current ...string) LeaderGroup {
		return LeaderGroup{Account: "APP", Stream: name, Leader: leader, Current: current}
	}
	consumer := func(s, name, leader string, current ...string) LeaderGroup {
		return LeaderGroup{Account: "APP", Stream: s, Consumer: name, Leader: leader, Current: current}
	}
	cases := []struct {
		name    string
		in      LeaderBalance
		want    []string // "stream/consumer->to"
		wantMax int      // the highest count afterwards
	}{
		{"balanced", LeaderBalance{Servers: servers, MaxMoves: 10, Groups: []LeaderGroup{
			stream("A", "n-0", "n-1", "n-2"), stream("B", "n-1", "n-0", "n-2"), stream("C", "n-2", "n-0", "n-1")}}, nil, 1},
		{"one apart is balanced", LeaderBalance{Servers: servers, MaxMoves: 10, Groups: []LeaderGroup{
			stream("A", "n-0", "n-1", "n-2"), stream("B", "n-0", "n-1", "n-2"), stream("C", "n-1", "n-0", "n-2"), stream("D", "n-2", "n-0", "n-1")}}, nil, 2},
		{"piled on one", LeaderBalance{Servers: servers, MaxMoves: 10, Groups: []LeaderGroup{
			stream("A", "n-0", "n-1", "n-2"), stream("B", "n-0", "n-1", "n-2"), stream("C", "n-0", "n-1", "n-2"),
			stream("D", "n-0", "n-1", "n-2"), stream("E", "n-0", "n-1", "n-2"), stream("F", "n-0", "n-1", "n-2")}},
			[]string{"A->n-1", "B->n-2", "C->n-1", "D->n-2"}, 2},
		{"only to a current follower", LeaderBalance{Servers: servers, MaxMoves: 10, Groups: []LeaderGroup{
			stream("A", "n-0", "n-1"), stream("B", "n-0", "n-1"), stream("C", "n-0", "n-1")}},
			[]string{"A->n-1"}, 2},
		{"a stream and its consumer not together", LeaderBalance{Servers: servers, MaxMoves: 10, Groups: []LeaderGroup{
			stream("A", "n-0", "n-1", "n-2"), consumer("A", "c1", "n-0", "n-1", "n-2"), consumer("A", "c2", "n-0", "n-1", "n-2")}},
			[]string{"A->n-1"}, 2},
		{"bounded", LeaderBalance{Servers: servers, MaxMoves: 1, Groups: []LeaderGroup{
			stream("A", "n-0", "n-1", "n-2"), stream("B", "n-0", "n-1", "n-2"), stream("C", "n-0", "n-1", "n-2")}},
			[]string{"A->n-1"}, 2},
		{"not to a server that may not lead", LeaderBalance{Servers: []string{"n-0", "n-1"}, MaxMoves: 10, Groups: []LeaderGroup{
			stream("A", "n-0", "n-2"), stream("B", "n-0", "n-2"), stream("C", "n-0", "n-1", "n-2")}},
			[]string{"C->n-1"}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			moves, counts := BalanceLeaders(tc.in)
			var got []string
			for _, m := range moves {
				name := m.Group.Stream
				if m.Group.Consumer != "" {
					name += "/" + m.Group.Consumer
				}
				got = append(got, name+"->"+m.To)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("moves %v, want %v", got, tc.want)
			}
			highest := 0
			for _, n := range counts {
				highest = max(highest, n)
			}
			if highest != tc.wantMax {
				t.Errorf("counts %v: the highest %d, want %d", counts, highest, tc.wantMax)
			}
		})
	}
}
