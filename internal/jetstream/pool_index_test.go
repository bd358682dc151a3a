package jetstream

import (
	"fmt"
	"slices"
	"testing"
)

// placeUsers points each user at its address on c, as Acquire does.
func placeUsers(p *Pool, c *Conn, users map[User]Address) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.users == nil {
		p.conns, p.users, p.byStream = map[string]*Conn{}, map[User]use{}, map[streamOn]map[User]struct{}{}
	}
	for u, a := range users {
		p.moveUser(u, use{conn: c, addr: a})
	}
}

func woken(p *Pool, c *Conn, addr Address) []User {
	var got []User
	p.OnChange = func(u User) { got = append(got, u) }
	p.advisory(c, addr)
	slices.Sort(got)
	return got
}

// The index an advisory reads follows users as they move between streams
// and connections and as they go. Careless variants it catches: a user
// left in its old stream's set after moving (woken by news it no longer
// cares for), or never added to the new one.
func TestPoolAdvisoryIndexFollowsUsers(t *testing.T) {
	p := &Pool{}
	c1, c2 := &Conn{key: "one"}, &Conn{key: "two"}
	placeUsers(p, c1, map[User]Address{
		"Stream/ns/a":   {Stream: "a"},
		"Consumer/ns/x": {Stream: "a", Consumer: "x"},
		"Stream/ns/b":   {Stream: "b"},
	})
	if got := woken(p, c1, Address{Stream: "a"}); !slices.Equal(got, []User{"Consumer/ns/x", "Stream/ns/a"}) {
		t.Fatalf("news of stream a woke %v", got)
	}
	if got := woken(p, c1, Address{Stream: "a", Consumer: "x"}); !slices.Equal(got, []User{"Consumer/ns/x"}) {
		t.Fatalf("news of consumer a/x woke %v", got)
	}
	if got := woken(p, c2, Address{Stream: "a"}); len(got) != 0 {
		t.Fatalf("news of stream a on another connection woke %v", got)
	}

	// The consumer moves to stream b, stream a's resource to connection two.
	placeUsers(p, c1, map[User]Address{"Consumer/ns/x": {Stream: "b", Consumer: "x"}})
	placeUsers(p, c2, map[User]Address{"Stream/ns/a": {Stream: "a"}})
	if got := woken(p, c1, Address{Stream: "a"}); len(got) != 0 {
		t.Fatalf("after the moves, news of stream a on connection one woke %v", got)
	}
	if got := woken(p, c2, Address{Stream: "a"}); !slices.Equal(got, []User{"Stream/ns/a"}) {
		t.Fatalf("after the moves, news of stream a on connection two woke %v", got)
	}
	if got := woken(p, c1, Address{Stream: "b"}); !slices.Equal(got, []User{"Consumer/ns/x", "Stream/ns/b"}) {
		t.Fatalf("after the moves, news of stream b woke %v", got)
	}

	for _, u := range []User{"Stream/ns/a", "Consumer/ns/x", "Stream/ns/b"} {
		p.Release(u)
	}
	if len(p.byStream) != 0 || len(p.users) != 0 {
		t.Fatalf("after every release the pool still indexes %v (users %v)", p.byStream, p.users)
	}
}

// An advisory costs the users of its stream, not every user of the pool:
// the same allocations with 10 or 10,000 users on other streams. The
// careless variant, a scan of every user per advisory, made convergence
// quadratic (83 % of the operator's allocations at 10,000 objects, issue
// 19); BenchmarkPoolAdvisory shows the time.
func TestPoolAdvisoryCostDoesNotGrowWithUsers(t *testing.T) {
	cost := func(others int) float64 {
		p, c := manyUsers(others)
		p.OnChange = func(User) {}
		return testing.AllocsPerRun(100, func() { p.advisory(c, Address{Stream: "mine"}) })
	}
	small, large := cost(10), cost(10_000)
	if large > small {
		t.Fatalf("an advisory allocates %.0f times among 10,000 users, %.0f among 10", large, small)
	}
}

func BenchmarkPoolAdvisory(b *testing.B) {
	for _, others := range []int{100, 10_000} {
		b.Run(fmt.Sprint(others), func(b *testing.B) {
			p, c := manyUsers(others)
			p.OnChange = func(User) {}
			for b.Loop() {
				p.advisory(c, Address{Stream: "mine"})
			}
		})
	}
}

// manyUsers is a pool with a stream "mine" and its consumer, and others
// users of other streams, all on one connection.
func manyUsers(others int) (*Pool, *Conn) {
	p, c := &Pool{}, &Conn{key: "k"}
	users := map[User]Address{"Stream/ns/mine": {Stream: "mine"}, "Consumer/ns/mine-c": {Stream: "mine", Consumer: "c"}}
	for i := range others {
		users[User(fmt.Sprintf("Stream/ns/s%05d", i))] = Address{Stream: fmt.Sprintf("s%05d", i)}
	}
	placeUsers(p, c, users)
	return p, c
}
