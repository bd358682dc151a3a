package jetstream

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/test/testnats"
)

// The pool is tested against a real nats-server with JetStream, embedded in
// the test process: the server's own client count is the truth about how
// many connections the pool holds open.

// poolServer starts a nats-server with JetStream on port (0: any free one),
// stopped when the test ends.
func poolServer(t *testing.T, port int) *server.Server { return testnats.Start(t, port) }

// poolFreePort is a port nothing listens on (right after it returns).
func poolFreePort(t *testing.T) int { return testnats.FreePort(t) }

// newTestPool is a pool whose connections are all closed when the test ends.
func newTestPool(t *testing.T) *Pool {
	p := &Pool{IdleTimeout: time.Minute}
	t.Cleanup(func() { p.closeIdle(time.Time{}, true) })
	return p
}

func specFor(s *server.Server) ConnSpec {
	return ConnSpec{System: "test", Servers: []string{s.ClientURL()}}
}

// testCtx bounds every call of one test: a hang fails the test instead of
// the whole run.
func testCtx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// poll checks until check returns nil, failing the test with the last error
// after 20s.
func poll(t *testing.T, check func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within 20s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// clients polls until the server counts want client connections.
func clients(t *testing.T, s *server.Server, want int) {
	t.Helper()
	poll(t, func() error {
		if n := s.NumClients(); n != want {
			return fmt.Errorf("server has %d client connections, want %d", n, want)
		}
		return nil
	})
}

func TestPoolSharesOneConnectionAmongConcurrentUsers(t *testing.T) {
	s := poolServer(t, 0)
	p := newTestPool(t)
	spec := specFor(s)
	const users = 50
	conns := make([]*Conn, users)
	errs := make([]error, users)
	var wg sync.WaitGroup
	for i := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conns[i], errs[i] = p.Acquire(testCtx(t), User(fmt.Sprintf("Stream/ns/s%d", i)), Address{Stream: fmt.Sprintf("s%d", i)}, spec)
		}()
	}
	wg.Wait()
	for i := range users {
		if errs[i] != nil {
			t.Fatalf("user %d: %v", i, errs[i])
		}
		if conns[i] != conns[0] {
			t.Fatalf("user %d got connection %p, user 0 got %p: want one shared", i, conns[i], conns[0])
		}
	}
	if conns[0].NC == nil || !conns[0].NC.IsConnected() || conns[0].JS == nil {
		t.Fatalf("shared connection not usable: %+v", conns[0])
	}
	if n := p.Len(); n != 1 {
		t.Fatalf("pool holds %d connections, want 1", n)
	}
	if n := s.NumClients(); n != 1 {
		t.Fatalf("server has %d client connections for %d users, want 1", n, users)
	}
	if c := conns[0]; c.users != users {
		t.Fatalf("connection counts %d users, want %d", c.users, users)
	}
}

func TestPoolIdleConnectionsAreClosed(t *testing.T) {
	s := poolServer(t, 0)
	p := newTestPool(t)
	one, two := specFor(s), specFor(s)
	one.User, one.Password = "app", "one"
	two.User, two.Password = "app", "two" // a server without auth takes any
	a1, err := p.Acquire(testCtx(t), "Stream/ns/a1", Address{Stream: "a"}, one)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := p.Acquire(testCtx(t), "Stream/ns/a2", Address{Stream: "a"}, one)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Acquire(testCtx(t), "Stream/ns/b", Address{Stream: "b"}, two)
	if err != nil {
		t.Fatal(err)
	}
	if a1 != a2 || a1 == b {
		t.Fatalf("same spec shares (%p, %p), another password does not (%p)", a1, a2, b)
	}
	if n := p.Len(); n != 2 {
		t.Fatalf("pool holds %d connections, want 2", n)
	}
	clients(t, s, 2)

	// Connections in use are never closed, however old.
	p.closeIdle(time.Now().Add(time.Hour), false)
	if n := p.Len(); n != 2 || a1.NC.IsClosed() || b.NC.IsClosed() {
		t.Fatalf("closeIdle closed connections in use: len %d, a closed %v, b closed %v", n, a1.NC.IsClosed(), b.NC.IsClosed())
	}

	// One of two users leaving keeps the connection in use.
	p.Release("Stream/ns/a1")
	p.closeIdle(time.Now().Add(time.Second), false)
	if n := p.Len(); n != 2 || a1.NC.IsClosed() {
		t.Fatalf("closeIdle closed a connection one user still holds: len %d, closed %v", n, a1.NC.IsClosed())
	}

	// Idle, but not for long enough: kept.
	p.Release("Stream/ns/a2")
	p.Release("Stream/ns/b")
	p.closeIdle(time.Now().Add(-time.Hour), false)
	if n := p.Len(); n != 2 {
		t.Fatalf("closeIdle closed connections idle for less than the timeout: len %d", n)
	}

	p.closeIdle(time.Now().Add(time.Second), false)
	if n := p.Len(); n != 0 {
		t.Fatalf("pool holds %d connections after closing the idle ones, want 0", n)
	}
	if !a1.NC.IsClosed() || !b.NC.IsClosed() {
		t.Fatalf("idle connections not closed: a %v, b %v", a1.NC.Status(), b.NC.Status())
	}
	clients(t, s, 0)
}

func TestPoolUserMovingToANewSpecLeavesTheOldConnectionIdle(t *testing.T) {
	s := poolServer(t, 0)
	p := newTestPool(t)
	old, rotated := specFor(s), specFor(s)
	old.Token, rotated.Token = "before", "after"
	before, err := p.Acquire(testCtx(t), "Stream/ns/orders", Address{Stream: "orders"}, old)
	if err != nil {
		t.Fatal(err)
	}
	after, err := p.Acquire(testCtx(t), "Stream/ns/orders", Address{Stream: "orders"}, rotated)
	if err != nil {
		t.Fatal(err)
	}
	if before == after {
		t.Fatal("a rotated credential reused the old connection")
	}
	if n := p.Len(); n != 2 {
		t.Fatalf("pool holds %d connections, want 2 until the old one idles out", n)
	}
	clients(t, s, 2)
	if before.users != 0 || after.users != 1 {
		t.Fatalf("users: old connection %d, new %d; want 0 and 1", before.users, after.users)
	}

	p.closeIdle(time.Now().Add(time.Second), false)
	if n := p.Len(); n != 1 {
		t.Fatalf("pool holds %d connections, want the new one only", n)
	}
	if !before.NC.IsClosed() || after.NC.IsClosed() {
		t.Fatalf("old connection closed %v (want true), new closed %v (want false)", before.NC.IsClosed(), after.NC.IsClosed())
	}
	clients(t, s, 1)
	// The user is still served by the new connection.
	again, err := p.Acquire(testCtx(t), "Stream/ns/orders", Address{Stream: "orders"}, rotated)
	if err != nil || again != after {
		t.Fatalf("Acquire after the move = %p, %v; want the new connection %p", again, err, after)
	}
}

func TestPoolDialFailureKeepsNoBrokenEntry(t *testing.T) {
	port := poolFreePort(t)
	p := newTestPool(t)
	spec := ConnSpec{System: "test", Servers: []string{fmt.Sprintf("nats://127.0.0.1:%d", port)}}

	// The dial fails by itself, long before this deadline: the error is
	// the dial's, not the context's.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := p.Acquire(ctx, "Stream/ns/early", Address{Stream: "early"}, spec)
	if err == nil {
		t.Fatalf("Acquire with nothing listening = %+v, want an error", c)
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		t.Fatalf("Acquire waited for its context instead of failing: %v", err)
	}
	if !errors.Is(err, nats.ErrNoServers) {
		t.Fatalf("Acquire error = %v, want nats: no servers available", err)
	}
	if n := p.Len(); n != 0 {
		t.Fatalf("pool keeps %d entries after a failed dial, want 0", n)
	}

	s := poolServer(t, port)
	c, err = p.Acquire(testCtx(t), "Stream/ns/late", Address{Stream: "late"}, spec)
	if err != nil {
		t.Fatalf("Acquire once the server is up: %v", err)
	}
	if c.NC == nil || !c.NC.IsConnected() {
		t.Fatalf("connection after the server came up is not connected: %+v", c)
	}
	if n := p.Len(); n != 1 {
		t.Fatalf("pool holds %d connections, want 1", n)
	}
	clients(t, s, 1)
}

func TestPoolConnSpecKey(t *testing.T) {
	base := ConnSpec{
		System: "connection/ns", Servers: []string{"nats://a:4222", "nats://b:4222"}, Domain: "hub",
		User: "app", Password: "0badc0de5ecre7", Token: "tok",
		Creds: []byte("creds-file"), NKeySeed: []byte("SUAseed"),
		CA: []byte("ca-pem"), Cert: []byte("cert-pem"), PrivateKey: []byte("key-pem"),
	}
	flip := func(b []byte) []byte {
		out := append([]byte(nil), b...)
		out[len(out)-1] ^= 1
		return out
	}
	flipS := func(s string) string { return string(flip([]byte(s))) }
	cases := []struct {
		name string
		edit func(*ConnSpec)
	}{
		{"system", func(s *ConnSpec) { s.System = flipS(s.System) }},
		{"servers", func(s *ConnSpec) { s.Servers = []string{s.Servers[0], flipS(s.Servers[1])} }},
		{"server order", func(s *ConnSpec) { s.Servers = []string{s.Servers[1], s.Servers[0]} }},
		{"domain", func(s *ConnSpec) { s.Domain = flipS(s.Domain) }},
		{"user", func(s *ConnSpec) { s.User = flipS(s.User) }},
		{"password", func(s *ConnSpec) { s.Password = flipS(s.Password) }},
		{"password first byte", func(s *ConnSpec) { s.Password = "1" + s.Password[1:] }},
		{"token", func(s *ConnSpec) { s.Token = flipS(s.Token) }},
		{"creds", func(s *ConnSpec) { s.Creds = flip(s.Creds) }},
		{"nkey seed", func(s *ConnSpec) { s.NKeySeed = flip(s.NKeySeed) }},
		{"ca", func(s *ConnSpec) { s.CA = flip(s.CA) }},
		{"cert", func(s *ConnSpec) { s.Cert = flip(s.Cert) }},
		{"private key", func(s *ConnSpec) { s.PrivateKey = flip(s.PrivateKey) }},
		{"password emptied", func(s *ConnSpec) { s.Password = "" }},
		// Fields are delimited: bytes moving from one to the next change
		// the key.
		{"user and password boundary", func(s *ConnSpec) { s.User, s.Password = s.User+s.Password[:1], s.Password[1:] }},
		{"token moved to password", func(s *ConnSpec) { s.Password, s.Token = s.Password+s.Token, "" }},
	}
	k0 := base.Key()
	if k0 != base.Key() {
		t.Fatal("Key is not stable")
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			s.Servers = append([]string(nil), base.Servers...)
			tc.edit(&s)
			k := s.Key()
			if k == k0 {
				t.Fatalf("key unchanged (%s) after changing %s", k, tc.name)
			}
			for _, secret := range []string{s.Password, s.Token, string(s.Creds), string(s.NKeySeed), string(s.PrivateKey)} {
				if secret != "" && strings.Contains(k, secret) {
					t.Fatalf("key %q holds the credential %q", k, secret)
				}
			}
		})
	}
	for _, secret := range []string{base.Password, base.Token, "0badc0de"} {
		if strings.Contains(k0, secret) {
			t.Fatalf("key %q holds credential text %q", k0, secret)
		}
	}
}

// wakeups records the pool's wake-ups, per user.
type wakeups struct {
	mu    sync.Mutex
	count map[User]int
}

func recordWakeups(p *Pool) *wakeups {
	w := &wakeups{count: map[User]int{}}
	p.OnChange = func(u User) {
		w.mu.Lock()
		w.count[u]++
		w.mu.Unlock()
	}
	return w
}

// until runs mark, whose news reaches the pool after everything done before
// it, waits for marker to be woken by it, and returns who was woken until
// then, counting afresh from there.
// settle waits until nothing has woken anyone for quiet, then forgets
// what came before: late news of a setup (each consumer's advisories
// come from a queue of its own) is not taken for what follows.
func (w *wakeups) settle(t *testing.T, quiet time.Duration) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		w.mu.Lock()
		before := maps.Clone(w.count)
		w.mu.Unlock()
		time.Sleep(quiet)
		w.mu.Lock()
		still := maps.Equal(before, w.count)
		if still {
			clear(w.count)
		}
		w.mu.Unlock()
		if still {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("wake-ups never stopped: %v", before)
		}
	}
}

func (w *wakeups) until(t *testing.T, marker User, mark func() error) map[User]int {
	t.Helper()
	if err := mark(); err != nil {
		t.Fatal(err)
	}
	var seen map[User]int
	poll(t, func() error {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.count[marker] == 0 {
			return fmt.Errorf("%s not woken yet; woken: %v", marker, w.count)
		}
		seen = maps.Clone(w.count)
		clear(w.count)
		return nil
	})
	return seen
}

// acquireAll acquires every user at its address and returns the last
// connection, its advisory subscription in place on the server.
func acquireAll(t *testing.T, p *Pool, spec ConnSpec, users map[User]Address) *Conn {
	t.Helper()
	var c *Conn
	var err error
	for u, addr := range users {
		if c, err = p.Acquire(testCtx(t), u, addr, spec); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.NC.Flush(); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPoolAdvisoriesWakeTheUsersOfTheStream(t *testing.T) {
	s := poolServer(t, 0)
	p := newTestPool(t)
	w := recordWakeups(p)
	other := testnats.JetStream(t, s)
	for _, name := range []string{"orders", "other"} {
		if _, err := other.CreateStream(testCtx(t), js.StreamConfig{Name: name, Subjects: []string{name + ".>"}}); err != nil {
			t.Fatal(err)
		}
	}
	acquireAll(t, p, specFor(s), map[User]Address{
		"Stream/ns/orders":         {Stream: "orders"},
		"Consumer/ns/orders-audit": {Stream: "orders", Consumer: "audit"},
		"Stream/ns/other":          {Stream: "other"},
		"Stream/ns/barrier":        {Stream: "barrier"},
		"Stream/ns/sentinel":       {Stream: "sentinel"},
	})
	// Stream advisories leave the server in order: the creation of a
	// stream marks that everything before it has been handled.
	create := func(name string) func() error {
		return func() error {
			_, err := other.CreateStream(testCtx(t), js.StreamConfig{Name: name, Subjects: []string{name + ".>"}})
			return err
		}
	}
	w.until(t, "Stream/ns/barrier", create("barrier")) // the setup's advisories are in

	seen := w.until(t, "Stream/ns/sentinel", func() error {
		if err := other.DeleteStream(testCtx(t), "orders"); err != nil {
			return err
		}
		return create("sentinel")()
	})
	if seen["Stream/ns/orders"] == 0 || seen["Consumer/ns/orders-audit"] == 0 {
		t.Fatalf("woken %v by the deletion of orders, want both of its users", seen)
	}
	if seen["Stream/ns/other"] != 0 {
		t.Fatalf("the user of stream other was woken %d times by news about orders", seen["Stream/ns/other"])
	}
}

// A consumer's news wakes that consumer's resource only: its creation or
// deletion, and an update, which the server tells only in its API audit.
// Per-message advisories wake no one.
func TestPoolConsumerNewsWakesOnlyThatConsumer(t *testing.T) {
	s := poolServer(t, 0)
	p := newTestPool(t)
	w := recordWakeups(p)
	other := testnats.JetStream(t, s)
	pooled := acquireAll(t, p, specFor(s), map[User]Address{
		"Stream/ns/orders":     {Stream: "orders"},
		"Consumer/ns/worker":   {Stream: "orders", Consumer: "worker"},
		"Consumer/ns/audit":    {Stream: "orders", Consumer: "audit"},
		"Consumer/ns/sentinel": {Stream: "orders", Consumer: "sentinel"},
	})
	if _, err := other.CreateStream(testCtx(t), js.StreamConfig{Name: "orders", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"worker", "audit", "sentinel"} {
		if _, err := other.CreateConsumer(testCtx(t), "orders", js.ConsumerConfig{Durable: name, AckPolicy: js.AckExplicitPolicy}); err != nil {
			t.Fatal(err)
		}
	}
	// Every consumer hears of its stream's creation, of its own (each
	// consumer's advisories come from a queue of its own, in no order
	// with the others'), and of the API call that made it.
	poll(t, func() error {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, u := range []User{"Consumer/ns/worker", "Consumer/ns/audit", "Consumer/ns/sentinel"} {
			if w.count[u] < 3 {
				return fmt.Errorf("woken %v, want every consumer three times after the setup", w.count)
			}
		}
		return nil
	})
	w.settle(t, 300*time.Millisecond)
	// From here on only updates happen, told in the API audit in the order
	// of the calls: the sentinel's update marks the end of what came before.
	update := func(c js.JetStream, name, description string) func() error {
		return func() error {
			_, err := c.UpdateConsumer(testCtx(t), "orders", js.ConsumerConfig{Durable: name, AckPolicy: js.AckExplicitPolicy, Description: description})
			return err
		}
	}

	if err := update(other, "worker", "edited")(); err != nil {
		t.Fatal(err)
	}
	seen := w.until(t, "Consumer/ns/sentinel", update(other, "sentinel", "after worker"))
	if seen["Consumer/ns/worker"] == 0 || seen["Consumer/ns/audit"] != 0 || seen["Stream/ns/orders"] != 0 {
		t.Fatalf("woken %v by worker's update, want Consumer/ns/worker alone", seen)
	}

	// The pool's own update of audit wakes audit, as any news does (its
	// pass compares); a message terminated on worker wakes no one.
	if err := update(pooled.JS, "audit", "ours")(); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Publish(testCtx(t), "orders.1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	worker, err := other.Consumer(testCtx(t), "orders", "worker")
	if err != nil {
		t.Fatal(err)
	}
	batch, err := worker.Fetch(1)
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		if err := m.Term(); err != nil {
			t.Fatal(err)
		}
	}
	seen = w.until(t, "Consumer/ns/sentinel", update(other, "sentinel", "after ours"))
	if seen["Consumer/ns/audit"] == 0 {
		t.Error("the pool's own update of audit did not wake audit")
	}
	for _, u := range []User{"Stream/ns/orders", "Consumer/ns/worker"} {
		if seen[u] != 0 {
			t.Errorf("%s woken %d times by another consumer's update or a terminated message", u, seen[u])
		}
	}
}

// Every piece of news wakes the user, the news of its own writes too: the
// pass it starts compares the server object with the spec. Another
// client's change right after an own write, or after an own write that
// brought no news at all (a create of a stream that is already there as
// asked), wakes it as well. Careless variant seen to fail here: the pool
// taking the first creation or update within 2 s of an own write as that
// write's news (ExpectOwnWrite, before issue 36): the foreign update after
// the silent create was swallowed.
func TestPoolEveryNewsWakesEvenAfterAnOwnWrite(t *testing.T) {
	s := poolServer(t, 0)
	p := newTestPool(t)
	w := recordWakeups(p)
	other := testnats.JetStream(t, s)
	c := acquireAll(t, p, specFor(s), map[User]Address{
		"Stream/ns/orders":   {Stream: "orders"},
		"Stream/ns/sentinel": {Stream: "sentinel"},
	})
	// Stream advisories go through one server queue, in order: the
	// sentinel's creation or update marks that all before it was handled.
	sentinel := func(description string) func() error {
		return func() error {
			_, err := other.CreateOrUpdateStream(testCtx(t), js.StreamConfig{Name: "sentinel", Description: description})
			return err
		}
	}
	ours := js.StreamConfig{Name: "orders", Subjects: []string{"orders.>"}}
	theirs := func(description string) {
		t.Helper()
		cfg := ours
		cfg.Description = description
		if _, err := other.UpdateStream(testCtx(t), cfg); err != nil {
			t.Fatal(err)
		}
	}

	if _, err := c.JS.CreateStream(testCtx(t), ours); err != nil {
		t.Fatal(err)
	}
	if seen := w.until(t, "Stream/ns/sentinel", sentinel("own create")); seen["Stream/ns/orders"] == 0 {
		t.Fatal("the pool's own create did not wake its user: nothing would compare the server with the spec")
	}
	if _, err := c.JS.UpdateStream(testCtx(t), ours); err != nil {
		t.Fatal(err)
	}
	theirs("right after ours")
	if seen := w.until(t, "Stream/ns/sentinel", sentinel("own update, then theirs")); seen["Stream/ns/orders"] < 2 {
		t.Fatalf("woken %d times by an own update and another client's right after it, want 2", seen["Stream/ns/orders"])
	}
	// A create of what is there already succeeds and tells nothing; the
	// next news is another client's.
	if _, err := c.JS.CreateStream(testCtx(t), ours); err == nil {
		theirs("after a silent create")
	} else if _, err := c.JS.UpdateStream(testCtx(t), ours); err != nil {
		t.Fatal(err)
	}
	if seen := w.until(t, "Stream/ns/sentinel", sentinel("after a silent write")); seen["Stream/ns/orders"] == 0 {
		t.Fatal("another client's update after an own write that brought no news did not wake the user")
	}
}

// A create or update by another client marks the object written by someone
// else, once; the pool's own writes do not, nor does another object's
// write. The server's answer to a write is built after it, so it may hold
// another client's write made in between: the mark is how the next pass
// knows to write anyway. Careless variants seen to fail here: every
// audited write taken for another client's (no client compared: the
// pool's own writes marked), and none.
func TestPoolForeignWriteIsMarked(t *testing.T) {
	s := poolServer(t, 0)
	p := newTestPool(t)
	recordWakeups(p)
	other := testnats.JetStream(t, s)
	c := acquireAll(t, p, specFor(s), map[User]Address{
		"Stream/ns/orders":   {Stream: "orders"},
		"Consumer/ns/worker": {Stream: "orders", Consumer: "worker"},
		"Stream/ns/sentinel": {Stream: "sentinel"},
	})
	// Every audit leaves the server through one queue, though not always
	// in the order of the writes: the server queues a write's audit after
	// its answer, and under load the next write's audit may be queued
	// first. So a mark that must come is waited for, and a mark that must
	// not come is looked for once the sentinel's audit is in, written
	// after the write in question.
	auditsIn := func(description string) {
		t.Helper()
		if _, err := other.CreateOrUpdateStream(testCtx(t), js.StreamConfig{Name: "sentinel", Description: description}); err != nil {
			t.Fatal(err)
		}
		poll(t, func() error {
			if !p.TakeForeignWrite("Stream/ns/sentinel") {
				return fmt.Errorf("the sentinel's audit is not in yet")
			}
			return nil
		})
	}
	ours := js.StreamConfig{Name: "orders", Subjects: []string{"orders.>"}}
	if _, err := c.JS.CreateStream(testCtx(t), ours); err != nil {
		t.Fatal(err)
	}
	if _, err := c.JS.CreateConsumer(testCtx(t), "orders", js.ConsumerConfig{Durable: "worker"}); err != nil {
		t.Fatal(err)
	}
	auditsIn("after own writes")
	for _, u := range []User{"Stream/ns/orders", "Consumer/ns/worker"} {
		if p.TakeForeignWrite(u) {
			t.Errorf("%s marked written by someone else after the pool's own writes", u)
		}
	}

	theirs := ours
	theirs.Description = "theirs"
	if _, err := other.UpdateStream(testCtx(t), theirs); err != nil {
		t.Fatal(err)
	}
	auditsIn("after their stream update")
	marked(t, p, "Stream/ns/orders", "another client's update of the stream did not mark it")
	if p.TakeForeignWrite("Stream/ns/orders") {
		t.Error("the mark was not forgotten once taken")
	}
	if p.TakeForeignWrite("Consumer/ns/worker") {
		t.Error("the stream's update marked its consumer")
	}

	if _, err := other.UpdateConsumer(testCtx(t), "orders", js.ConsumerConfig{Durable: "worker", Description: "theirs"}); err != nil {
		t.Fatal(err)
	}
	auditsIn("after their consumer update")
	marked(t, p, "Consumer/ns/worker", "another client's update of the consumer did not mark it")
	if p.TakeForeignWrite("Stream/ns/orders") {
		t.Error("the consumer's update marked its stream")
	}
}

// marked waits until u is marked written by someone else, and takes the
// mark.
func marked(t *testing.T, p *Pool, u User, failure string) {
	t.Helper()
	poll(t, func() error {
		if !p.TakeForeignWrite(u) {
			return fmt.Errorf("%s", failure)
		}
		return nil
	})
}

// A connection closed for good wakes its users, so that they dial anew
// with what their Secrets hold now; the users of other connections sleep on.
func TestPoolClosedConnectionWakesItsUsers(t *testing.T) {
	one, two := poolServer(t, 0), poolServer(t, 0)
	p := newTestPool(t)
	w := recordWakeups(p)
	c := acquireAll(t, p, specFor(one), map[User]Address{"Stream/ns/a": {Stream: "a"}})
	acquireAll(t, p, specFor(two), map[User]Address{"Stream/ns/b": {Stream: "b"}})
	seen := w.until(t, "Stream/ns/a", func() error { c.NC.Close(); return nil })
	if seen["Stream/ns/b"] != 0 {
		t.Fatal("the user of another connection was woken")
	}
}

// A connection whose server went away is reported at once, not after the
// calls' deadline, and awaited while it comes back: a pass must not hold
// the operator's room for replies waiting on nats.go's reconnect buffer.
// Careless variant, run: IsConnected alone (no wait), which reports a
// server restarting behind its address as lost, and fails the first case.
func TestPoolAwaitConnectedWaitsOutAReconnectOnly(t *testing.T) {
	port := poolFreePort(t)
	s := poolServer(t, port)
	p := newTestPool(t)
	c := acquireAll(t, p, specFor(s), map[User]Address{"Stream/ns/a": {Stream: "a"}})
	if err := c.AwaitConnected(testCtx(t), time.Second); err != nil {
		t.Fatalf("connected: %v", err)
	}

	// Gone, and back while awaited: nats.go's next attempt, 2 s or so
	// after the failed one, finds it.
	s.Shutdown()
	s.WaitForShutdown()
	poll(t, func() error {
		if c.NC.IsConnected() {
			return errors.New("nats.go has not seen the server go")
		}
		return nil
	})
	restarted := poolServer(t, port)
	if err := c.AwaitConnected(testCtx(t), 10*time.Second); err != nil {
		t.Fatalf("a server back within the grace: %v", err)
	}

	// Gone for good: reported once the grace is over, not later.
	restarted.Shutdown()
	poll(t, func() error {
		if c.NC.IsConnected() {
			return errors.New("nats.go has not seen the server go")
		}
		return nil
	})
	began := time.Now()
	if err := c.AwaitConnected(testCtx(t), 500*time.Millisecond); !errors.Is(err, ErrReconnecting) {
		t.Fatalf("a server gone for good: %v, want ErrReconnecting", err)
	}
	if waited := time.Since(began); waited > 5*time.Second {
		t.Fatalf("reported after %s, want about the grace", waited)
	}

	// Closed: said so at once.
	c.NC.Close()
	if err := c.AwaitConnected(testCtx(t), time.Minute); !errors.Is(err, nats.ErrConnectionClosed) {
		t.Fatalf("a closed connection: %v, want ErrConnectionClosed", err)
	}
}
