package jetstream

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/internal/serverbudget"
)

// What the server may make a pool connection hold. nats.go queues every
// message of a subscription until its handler takes it, up to 64 MiB a
// subscription by default, and its subscription for request replies
// (_INBOX.<id>.*) cannot be given a smaller limit: a server that sends
// replies nobody asked for, faster than they are dropped, would fill it on
// every connection. So the guard admits only what nats.go asked for
// (deliveries), and the bytes it lets nats.go hold are bounded over the
// whole process:
//
//   - a request's reply: once, to the reply subject of a request nats.go
//     sent, within MaxCallWait of sending it. Each pass that calls a server
//     first reserves room for its reply (ReserveCalls; its calls run one
//     after another), so replies waited for take at most maxCallsInFlight.
//   - advisories: counted from the moment the guard admits one until the
//     pool's handler is done with it, at most maxAdvisoriesHeldPerConn a
//     connection and maxAdvisoriesHeld in all; past that they are dropped
//     and the connection's users are woken to look again (missedWake).
//   - anything for a subscription nats.go does not have: dropped (nats.go
//     would drop it too, after reading it).
const (
	// MaxCallWait is how long after a request its reply is admitted: the
	// longest a pass waits for its server calls (the controller's
	// serverCallsTimeout). A later reply has nobody waiting for it.
	MaxCallWait = 15 * time.Second
	// maxAwaited bounds the replies one connection waits for: far above
	// what the passes of every worker of every kind send at once.
	maxAwaited = 1024

	// maxCallsInFlight and maxAdvisoriesHeld are parts of the operator's
	// one memory budget for what servers send (serverbudget.Memory):
	// within it, so that neither takes all of it.
	maxCallsInFlight         = 16 << 20
	maxAdvisoriesHeld        = 8 << 20
	maxAdvisoriesHeldPerConn = 2 << 20
	// msgOverhead is what nats.go allocates for a message beside its bytes
	// (the Msg, its strings' headers, a queue link), counted with each.
	msgOverhead = 256
	// missedWake is how soon after advisories were dropped the
	// connection's users are woken, at most once in that time however many
	// were dropped.
	missedWake = time.Second
)

var (
	callsInFlight  = serverbudget.Memory.Within(maxCallsInFlight)
	advisoriesHeld = serverbudget.Memory.Within(maxAdvisoriesHeld)
)

// ReserveCalls takes room for the reply of one server call at a time, for
// a pass of the pool's users; release gives it back.
func ReserveCalls(ctx context.Context) (release func(), err error) {
	if err := callsInFlight.Take(ctx, "", maxAPIReply); err != nil {
		return nil, fmt.Errorf("waiting for room to read a NATS server's replies: %w", err)
	}
	return func() { callsInFlight.Give("", maxAPIReply) }, nil
}

// subRole is what one of nats.go's subscriptions is for.
type subRole uint8

const (
	subOther subRole = iota
	// subReplies is nats.go's one subscription for the replies to every
	// request: _INBOX.<id>.*.
	subReplies
	// subAdvisories is the pool's subscription to advisorySubject.
	subAdvisories
)

// deliveries decides, for one pool connection, which of the server's
// messages nats.go gets, from what nats.go wrote (clientScan). It outlives
// reconnections: nats.go keeps its subscriptions and queues across them.
type deliveries struct {
	mu   sync.Mutex
	subs map[uint64]subRole
	// replyPrefix is that of nats.go's reply subscription ("_INBOX.<id>.").
	replyPrefix string
	// awaited: reply subjects of requests sent, and until when a reply
	// to each is admitted.
	awaited map[string]time.Time
	// held: advisory bytes admitted and not yet handled (advisoriesHeld
	// holds as much).
	held   int64
	closed bool
	// onMissed is called (missedWake after a drop, not under mu) when
	// advisories were dropped for want of room.
	onMissed    func()
	wakePending bool
	now         func() time.Time
}

func newDeliveries(onMissed func()) *deliveries {
	return &deliveries{subs: map[uint64]subRole{}, awaited: map[string]time.Time{}, onMissed: onMissed, now: time.Now}
}

// wrote records what one of nats.go's lines tells.
func (d *deliveries) wrote(op clientOp) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch op.kind {
	case clientSub:
		role := subOther
		switch {
		case op.topic == advisorySubject:
			role = subAdvisories
		case strings.HasPrefix(op.topic, nats.InboxPrefix) && strings.HasSuffix(op.topic, ".*"):
			role = subReplies
			d.replyPrefix = strings.TrimSuffix(op.topic, "*")
		}
		d.subs[op.sid] = role
	case clientUnsub:
		delete(d.subs, op.sid)
	case clientRequest:
		if d.replyPrefix == "" || !strings.HasPrefix(op.topic, d.replyPrefix) {
			return
		}
		now := d.now()
		if len(d.awaited) >= maxAwaited {
			for subject, until := range d.awaited {
				if !now.Before(until) {
					delete(d.awaited, subject)
				}
			}
		}
		if len(d.awaited) < maxAwaited {
			d.awaited[op.topic] = now.Add(MaxCallWait)
		}
	}
}

// admit reports whether nats.go gets op (a MSG or an HMSG); it may strip
// an advisory's headers, which the pool does not read, so that what is
// counted is what the handler sees.
func (d *deliveries) admit(op *serverOp) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	role, ok := d.subs[op.sid]
	if !ok {
		return false
	}
	switch role {
	case subReplies:
		until, ok := d.awaited[string(op.subject)]
		delete(d.awaited, string(op.subject))
		return ok && d.now().Before(until)
	case subAdvisories:
		if op.kind == opHMsg {
			op.kind, op.payload, op.hdrLen = opMsg, op.payload[op.hdrLen:], 0
		}
		n := heldSize(len(op.subject), len(op.reply), len(op.payload))
		if d.closed || d.held+n > maxAdvisoriesHeldPerConn || !advisoriesHeld.TryTake("", n) {
			d.missed()
			return false
		}
		d.held += n
	}
	return true
}

// handled gives back what an advisory held, once the pool's handler is
// done with it.
func (d *deliveries) handled(m *nats.Msg) {
	n := heldSize(len(m.Subject), len(m.Reply), len(m.Data))
	d.mu.Lock()
	defer d.mu.Unlock()
	n = min(n, d.held) // nothing is given back twice (close gave back all)
	d.held -= n
	advisoriesHeld.Give("", n)
}

// close gives back all the connection held: nats.go drops its queues
// when the connection closes for good.
func (d *deliveries) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	advisoriesHeld.Give("", d.held)
	d.held = 0
}

// missed schedules the wake-up of the connection's users. d.mu is held.
func (d *deliveries) missed() {
	if d.onMissed == nil || d.wakePending || d.closed {
		return
	}
	d.wakePending = true
	time.AfterFunc(missedWake, func() {
		d.mu.Lock()
		d.wakePending = false
		d.mu.Unlock()
		d.onMissed()
	})
}

func heldSize(subject, reply, data int) int64 {
	return int64(subject + reply + data + msgOverhead)
}
