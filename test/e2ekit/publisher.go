package e2ekit

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// Publisher publishes with message IDs (0, 1, 2, ...) until halted,
// retrying each ID until the stream acknowledges it, and remembers how
// many were acknowledged and the longest time between two
// acknowledgements: the load a rollout is judged under.
type Publisher struct {
	js      natsjs.JetStream
	subject string
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	acked   int
	stall   time.Duration
	// gaps are the waits between two acknowledgements longer than
	// gapKept, for the longest stall within a part of the run.
	gaps []gap
}

type gap struct{ from, until time.Time }

// gapKept: shorter waits are no stall worth keeping.
const gapKept = 250 * time.Millisecond

// StartPublisher starts publishing to subject through js.
func StartPublisher(js natsjs.JetStream, subject string) *Publisher {
	p := &Publisher{js: js, subject: subject, stop: make(chan struct{}), done: make(chan struct{})}
	go p.run()
	return p
}

func (p *Publisher) run() {
	defer close(p.done)
	last := time.Now()
	for id := 0; ; id++ {
		for {
			select {
			case <-p.stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_, err := p.js.Publish(ctx, p.subject, []byte(strconv.Itoa(id)), natsjs.WithMsgID(strconv.Itoa(id)))
			cancel()
			if err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond) // a server is restarting: try again
		}
		now := time.Now()
		p.mu.Lock()
		p.acked = id + 1
		p.stall = max(p.stall, now.Sub(last))
		if now.Sub(last) > gapKept {
			p.gaps = append(p.gaps, gap{last, now})
		}
		p.mu.Unlock()
		last = now
	}
}

// Halt stops the publisher; called again (deferred), it does nothing.
func (p *Publisher) Halt() {
	select {
	case <-p.done:
		return
	default:
	}
	close(p.stop)
	<-p.done
}

// Count is how many messages were acknowledged so far.
func (p *Publisher) Count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acked
}

// Result is the acknowledged count and the longest stall.
func (p *Publisher) Result() (int, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acked, p.stall
}

// StallBetween is the longest wait for an acknowledgement that overlaps
// from..until (zero: to now), whole; under gapKept counts as none.
func (p *Publisher) StallBetween(from, until time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var longest time.Duration
	for _, g := range p.gaps {
		if g.until.After(from) && (until.IsZero() || g.from.Before(until)) {
			longest = max(longest, g.until.Sub(g.from))
		}
	}
	return longest
}

// Explain adds what the servers know to an error of a JetStream request on
// subject (nil: the error as it is).
type Explain func(err error, subject string) error

func (e Explain) of(err error, subject string) error {
	if e == nil {
		return err
	}
	return e(err, subject)
}

// StoredCount is how many messages stream holds once it settled: the
// acknowledged ones, and perhaps the one in flight when the publisher
// stopped (stored, its acknowledgement lost: at least once).
func StoredCount(t *testing.T, js natsjs.JetStream, stream string, acked int, explain Explain) int {
	t.Helper()
	stored := 0
	Eventually(t, Wait, func() error {
		s, err := js.Stream(Ctx(t), stream)
		if err != nil {
			return explain.of(err, "$JS.API.STREAM.INFO."+stream)
		}
		info := s.CachedInfo()
		if info.State.Msgs != uint64(acked) && info.State.Msgs != uint64(acked)+1 {
			return fmt.Errorf("the stream holds %d messages, %d were acknowledged", info.State.Msgs, acked)
		}
		stored = int(info.State.Msgs)
		return nil
	})
	return stored
}

// CheckEveryIDStored reads stream's stored messages back in order and
// finds every acknowledged ID exactly once (and at most the one in
// flight). A read that fails half way (the client is still reconnecting
// after the last restart) starts over.
//
// One ordered consumer reads the whole stream through its Messages
// iterator. Reading it by Fetch, as this did before, made a new consumer
// for every batch (nats.go resets an ordered consumer at each Fetch) and
// pulled from it at once: from a server other than the consumer's, the
// pull can arrive before the consumer's interest does (the interest
// travels over the application account's route, the reply to the create
// over the system account's own), and the server answers "no responders".
// With some 150 batches a read, one lost race in any of them failed the
// whole read, again at every retry: the "no responders for 30 s after
// Ready" of the operator-death and mesh tests, a race of this reader and
// not of the operator (the failing runs showed the client's server
// holding its routes' subscriptions and a fresh consumer per batch on the
// other servers). The iterator keeps one consumer and, should a pull meet
// no responders, makes it again itself.
func CheckEveryIDStored(t *testing.T, js natsjs.JetStream, stream string, acked, stored int, explain Explain) {
	t.Helper()
	Eventually(t, Wait, func() error {
		cons, err := js.OrderedConsumer(Ctx(t), stream, natsjs.OrderedConsumerConfig{})
		if err != nil {
			return explain.of(err, "$JS.API.CONSUMER.CREATE."+stream)
		}
		it, err := cons.Messages()
		if err != nil {
			return explain.of(err, "$JS.API.CONSUMER.MSG.NEXT."+stream+".>")
		}
		defer it.Stop()
		seen := make([]bool, acked+1)
		for n := 0; n < stored; n++ {
			m, err := it.Next(natsjs.NextMaxWait(5 * time.Second))
			if err != nil {
				return fmt.Errorf("read %d of %d messages, then: %w", n, stored, explain.of(err, "$JS.API.CONSUMER.MSG.NEXT."+stream+".>"))
			}
			id, err := strconv.Atoi(m.Headers().Get(nats.MsgIdHdr))
			if err != nil || id < 0 || id > acked || seen[id] {
				t.Fatalf("message %q (id header %q): unexpected or duplicate", m.Data(), m.Headers().Get(nats.MsgIdHdr))
			}
			seen[id] = true
		}
		for id := range acked {
			if !seen[id] {
				t.Fatalf("acknowledged message %d is not in the stream", id)
			}
		}
		return nil
	})
}
