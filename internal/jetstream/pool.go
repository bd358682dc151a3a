package jetstream

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/internal/serverbudget"
)

// Pool holds one connection per NATS system and identity, shared by every
// resource of every kind. A connection lives while some resource uses it and
// is closed after IdleTimeout without users.
type Pool struct {
	// Dialer replaces TCP dialing when set (tests resolve cluster names).
	// Either way, connections go through the guard (guard_conn.go).
	Dialer nats.CustomDialer
	// Targets says which addresses of systems kubenats does not run may be
	// dialled.
	Targets TargetPolicy
	// ServerPods lists the server pods of the NatsCluster namespace/name,
	// ready ones first: all a pinned connection dials (ConnSpec.Pinned). A
	// pinned spec without it is not dialled.
	ServerPods func(namespace, name string) ([]PodAddr, error)
	// OnChange is called with the user of every resource whose server
	// object an advisory says changed. It must not block.
	OnChange func(user User)
	// IdleTimeout is how long a connection without users stays open.
	IdleTimeout time.Duration
	// Memory and Connections, when set, replace the process-wide budgets
	// (serverbudget.Memory, serverbudget.Connections) its connections
	// draw on: tests.
	Memory, Connections *serverbudget.Budget

	mu    sync.Mutex
	conns map[string]*Conn
	users map[User]use
	// byStream indexes users by connection and stream, so that an advisory
	// costs the users of its stream, not every user of the pool: with
	// thousands of resources a scan per advisory made convergence
	// quadratic (83 % of the operator's allocations at 10,000 objects).
	byStream map[streamOn]map[User]struct{}
}

// streamOn is a stream on one connection: the users an advisory of that
// connection about that stream may concern.
type streamOn struct {
	conn   *Conn
	stream string
}

// User identifies a resource using the pool: kind/namespace/name.
type User string

// use is what a user uses: a connection, and where its server object lives
// (advisories name it).
type use struct {
	conn *Conn
	addr Address
	// foreignWrite: another client wrote the object (advisories.go).
	foreignWrite bool
}

// Address is where a server object lives: its stream, and for a consumer
// its name in that stream.
type Address struct {
	Stream   string
	Consumer string
}

// Conn is a pooled connection.
type Conn struct {
	NC *nats.Conn
	JS js.JetStream

	key       string
	delivered *deliveries
	// release gives back the connection's place in the operator's
	// allowance (once, when it closes or its dial fails).
	release func()
	// advisories is the subscription advisories.go handles.
	advisories *nats.Subscription
	users      int
	idleSince  time.Time
	ready      chan struct{} // closed once dialing ended
	err        error
}

// Acquire returns the connection for spec, dialing it on first use, and
// records that user's server object lives at addr on it. A user moving to
// another spec (rotated credentials) leaves its old connection. A new
// connection the operator's allowance has no room for is refused with
// serverbudget.ErrConnectionLimit, and the user stays where it was.
func (p *Pool) Acquire(ctx context.Context, user User, addr Address, spec ConnSpec) (*Conn, error) {
	key := spec.Key()
	p.mu.Lock()
	if p.conns == nil {
		p.conns, p.users, p.byStream = map[string]*Conn{}, map[User]use{}, map[streamOn]map[User]struct{}{}
	}
	c, ok := p.conns[key]
	if ok && c.closed() {
		// nats.go gave up on it (say, after repeated authorization
		// errors): dial anew rather than hand out a dead connection.
		delete(p.conns, key)
		ok = false
	}
	if !ok {
		release, err := openConnection(p.Connections, spec.namespace())
		if err != nil {
			p.mu.Unlock()
			return nil, err
		}
		c = &Conn{key: key, ready: make(chan struct{}), release: release}
		p.conns[key] = c
		go p.dial(c, spec)
	}
	p.moveUser(user, use{conn: c, addr: addr})
	p.mu.Unlock()

	select {
	case <-c.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if c.err != nil {
		p.mu.Lock()
		if p.conns[key] == c {
			delete(p.conns, key) // the next Acquire dials again
		}
		p.mu.Unlock()
		return nil, c.err
	}
	return c, nil
}

// Release forgets user, for a resource that is gone.
func (p *Pool) Release(user User) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.moveUser(user, use{})
}

// moveUser points user at u (or nowhere) and keeps the counts. Users are
// counted per connection object, so a connection dialled anew after a
// failure starts its count afresh. p.mu is held.
func (p *Pool) moveUser(user User, u use) {
	old, had := p.users[user]
	if had && old.conn == u.conn {
		if old.addr == u.addr {
			u.foreignWrite = old.foreignWrite // a pass acquires before it takes it
		} else {
			p.unindex(user, old)
			p.index(user, u)
		}
		p.users[user] = u
		return
	}
	if had {
		old.conn.users--
		if old.conn.users == 0 {
			old.conn.idleSince = time.Now()
		}
		p.unindex(user, old)
		delete(p.users, user)
	}
	if u.conn != nil {
		p.users[user] = u
		p.index(user, u)
		u.conn.users++
	}
}

// index and unindex keep byStream in step with users. p.mu is held.
func (p *Pool) index(user User, u use) {
	at := streamOn{u.conn, u.addr.Stream}
	set := p.byStream[at]
	if set == nil {
		set = map[User]struct{}{}
		p.byStream[at] = set
	}
	set[user] = struct{}{}
}

func (p *Pool) unindex(user User, u use) {
	at := streamOn{u.conn, u.addr.Stream}
	delete(p.byStream[at], user)
	if len(p.byStream[at]) == 0 {
		delete(p.byStream, at)
	}
}

// closed reports whether the connection was dialled and has since been
// closed for good. p.mu is held.
func (c *Conn) closed() bool {
	select {
	case <-c.ready:
		return c.NC != nil && c.NC.IsClosed()
	default:
		return false
	}
}

func (p *Pool) dial(c *Conn, spec ConnSpec) {
	defer close(c.ready)
	defer func() {
		if c.err != nil {
			c.release()
		}
	}()
	guard, err := p.guard(spec)
	if err != nil {
		c.err = err
		return
	}
	guard.onBreak = func() { go p.closeBroken(c) }
	c.delivered = newDeliveries(func() { p.wakeUsersOf(c) })
	guard.deliveries = c.delivered
	opts, err := spec.options(guard)
	if err != nil {
		c.err = err
		return
	}
	// A connection nats.go gives up on (say, credentials rotated on the
	// server) wakes its users: they read their Secrets again and dial anew.
	opts = append(opts, nats.Timeout(3*time.Second), nats.ClosedHandler(func(*nats.Conn) {
		c.delivered.close()
		c.release()
		p.wakeUsersOf(c)
	}))
	nc, err := nats.Connect(strings.Join(plainSchemes(spec.Servers), ","), opts...)
	if err != nil {
		c.err = err
		return
	}
	var jsc js.JetStream
	if spec.Domain != "" {
		jsc, err = js.NewWithDomain(nc, spec.Domain)
	} else {
		jsc, err = js.New(nc)
	}
	if err != nil {
		nc.Close()
		c.err = err
		return
	}
	if err := p.subscribeAdvisories(c, nc); err != nil {
		nc.Close()
		c.err = err
		return
	}
	c.NC, c.JS = nc, jsc
}

// closeBroken closes c for good once its dial is over: a server broke the
// guard's limits. Its users are woken (ClosedHandler) and dial anew.
func (p *Pool) closeBroken(c *Conn) {
	<-c.ready
	if c.NC != nil {
		c.NC.Close()
	}
}

// wakeUsersOf wakes every user of c. A connection closes rarely (credentials
// rotated, a server gone): a scan of every user is fine here, unlike per
// advisory.
func (p *Pool) wakeUsersOf(c *Conn) {
	if p.OnChange == nil {
		return
	}
	p.mu.Lock()
	var wake []User
	for user, u := range p.users {
		if u.conn == c {
			wake = append(wake, user)
		}
	}
	p.mu.Unlock()
	p.wake(wake)
}

// wake calls OnChange for each user, outside the lock.
func (p *Pool) wake(users []User) {
	for _, u := range users {
		p.OnChange(u)
	}
}

// Len is the number of open or opening connections.
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Start closes idle connections until ctx ends, then closes all. It makes
// the pool a manager Runnable.
func (p *Pool) Start(ctx context.Context) error {
	tick := time.NewTicker(p.IdleTimeout/2 + time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			p.closeIdle(time.Time{}, true)
			return nil
		case now := <-tick.C:
			p.closeIdle(now.Add(-p.IdleTimeout), false)
		}
	}
}

// closeIdle closes connections idle since before cutoff, or all of them.
func (p *Pool) closeIdle(cutoff time.Time, all bool) {
	p.mu.Lock()
	var doomed []*Conn
	for key, c := range p.conns {
		if all || (c.users == 0 && c.idleSince.Before(cutoff)) {
			doomed = append(doomed, c)
			delete(p.conns, key)
		}
	}
	p.mu.Unlock()
	for _, c := range doomed {
		<-c.ready
		if c.NC != nil {
			c.NC.Close()
		}
	}
}

// plainSchemes are servers with tls:// as nats://, for nats.go once the
// guard read the scheme: the guard, not nats.go, insists on TLS (nats.go
// would for the whole pool, even for a pinned pod that an earlier release
// started without client TLS, PodAddr.ServesNoTLS), and it makes the
// handshake itself.
func plainSchemes(servers []string) []string {
	out := make([]string, len(servers))
	for i, s := range servers {
		if rest, ok := strings.CutPrefix(s, "tls://"); ok {
			s = "nats://" + rest
		}
		out[i] = s
	}
	return out
}

// guard is the dialer for spec's connection.
func (p *Pool) guard(spec ConnSpec) (*guardDialer, error) {
	if spec.External {
		if err := CheckServerURLs(spec.Servers); err != nil {
			return nil, err
		}
	}
	g := &guardDialer{transport: p.Dialer, memory: p.Memory, namespace: spec.namespace()}
	if spec.External {
		g.targets = &p.Targets
	}
	if spec.Pinned != "" {
		ns, name, ok := strings.Cut(spec.Pinned, "/")
		if !ok || p.ServerPods == nil {
			return nil, fmt.Errorf("connection pinned to %q, which names no cluster this pool can list", spec.Pinned)
		}
		g.pinned = func() ([]PodAddr, error) { return p.ServerPods(ns, name) }
	}
	if len(spec.CA) > 0 || len(spec.Cert) > 0 {
		cfg, err := spec.tlsConfig()
		if err != nil {
			return nil, err
		}
		g.tls, g.wantTLS, g.tlsFirst = cfg, true, spec.TLSHandshakeFirst
	}
	for _, s := range spec.Servers {
		if strings.HasPrefix(s, "tls://") {
			g.wantTLS = true
		}
	}
	return g, nil
}
