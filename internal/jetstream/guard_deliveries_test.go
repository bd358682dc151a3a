package jetstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubenats/kubenats/test/testnats"
)

// TestDeliveriesAdmitWhatNatsGoAskedFor: the decisions, from nats.go's own
// lines. The careless variants each fail a row: admitting every message
// of a known subscription (the unsolicited and repeated replies), keying
// replies by subject without the subscription (a reply subject on the
// advisory sid), and no expiry (the late reply).
func TestDeliveriesAdmitWhatNatsGoAskedFor(t *testing.T) {
	now := time.Unix(1000, 0)
	d := newDeliveries(nil)
	d.now = func() time.Time { return now }
	var scan clientScan
	write := func(s string) {
		t.Helper()
		// A byte at a time: nats.go's writes split lines anywhere.
		for i := range len(s) {
			if err := scan.scan([]byte{s[i]}, d.wrote); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("CONNECT {\"verbose\":false}\r\nPING\r\nSUB _INBOX.id.* 1\r\nSUB $JS.EVENT.ADVISORY.> 2\r\n")
	// The payload holds what looks like a request: it is not one.
	write("PUB $JS.API.INFO _INBOX.id.tok 24\r\nPUB x _INBOX.id.fake 1\r\n\r\n")
	write("HPUB $JS.API.STREAM.INFO.S _INBOX.id.hdr 12 14\r\nNATS/1.0\r\n\r\nhi\r\n")
	msg := func(subject string, sid uint64) *serverOp {
		return &serverOp{kind: opMsg, subject: []byte(subject), sid: sid, payload: []byte("{}")}
	}
	for _, row := range []struct {
		name string
		op   *serverOp
		want bool
	}{
		{"the reply to a request sent", msg("_INBOX.id.tok", 1), true},
		{"that reply again", msg("_INBOX.id.tok", 1), false},
		{"a reply to no request", msg("_INBOX.id.other", 1), false},
		{"a reply subject named in a payload", msg("_INBOX.id.fake", 1), false},
		{"another subject on the reply subscription", msg("x", 1), false},
		{"a subscription nats.go does not have", msg("_INBOX.id.hdr", 7), false},
		{"an HPUB's reply", msg("_INBOX.id.hdr", 1), true},
		{"an advisory", msg("$JS.EVENT.ADVISORY.STREAM.CREATED.S", 2), true},
	} {
		if got := d.admit(row.op); got != row.want {
			t.Errorf("%s: admitted %v, want %v", row.name, got, row.want)
		}
	}
	write("PUB $JS.API.INFO _INBOX.id.late 0\r\n\r\n")
	now = now.Add(MaxCallWait)
	if d.admit(msg("_INBOX.id.late", 1)) {
		t.Error("a reply after MaxCallWait was admitted")
	}
	write("UNSUB 2\r\n")
	if d.admit(msg("$JS.EVENT.ADVISORY.STREAM.CREATED.S", 2)) {
		t.Error("an advisory after UNSUB was admitted")
	}
	d.close()
	if !advisoriesHeld.TryTake("", maxAdvisoriesHeld) {
		t.Fatal("closing did not give back what the admitted advisory held")
	}
	advisoriesHeld.Give("", maxAdvisoriesHeld)
}

// scripted serves one connection as a NATS server that reads the client:
// INFO, PONG to every PING, the client's subscriptions by subject, and
// onRequest called (once, in its own goroutine) with the reply subject of
// the client's first request on requestSubject.
type scripted struct {
	subs map[string]string // subject → sid
}

func startScripted(t *testing.T, requestSubject string, onRequest func(w *testnats.HostileWriter, s *scripted, reply string)) *testnats.Hostile {
	return testnats.StartHostile(t, func(w *testnats.HostileWriter) {
		if !w.Write(testnats.HostileInfo) {
			return
		}
		s := &scripted{subs: map[string]string{}}
		r := bufio.NewReader(w.Conn())
		asked := false
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			f := strings.Fields(line)
			switch {
			case len(f) == 0:
			case f[0] == "PING":
				w.Write("PONG\r\n")
			case f[0] == "SUB":
				s.subs[f[1]] = f[len(f)-1]
			case f[0] == "PUB" || f[0] == "HPUB":
				size, _ := strconv.Atoi(f[len(f)-1])
				if _, err := r.Discard(size + 2); err != nil {
					return
				}
				if f[1] == requestSubject && len(f) >= 4 && !asked {
					asked = true
					go onRequest(w, s, f[2])
				}
			}
		}
	}, nil)
}

func (s *scripted) sidOf(prefix string) string {
	for subject, sid := range s.subs {
		if strings.HasPrefix(subject, prefix) {
			return sid
		}
	}
	return "0"
}

// TestPoolTakesOnlyItsReplies: a server answers the pool's request with
// 64 replies to requests never sent and 64 messages of another subject on
// nats.go's reply subscription, 1 MiB each, then the reply, then that
// reply 16 times more. nats.go gets the reply alone (its own count of
// messages in), and the request has it. Without the guard's deliveries
// (careless variant: the pool's guardDialer.deliveries left nil) nats.go
// queues every one of them for its reply subscription (bounded only by
// its 64 MiB default, a connection) and hands the lone waiting request a
// message of another subject: measured, the account info call failed
// with "invalid character 'x' looking for beginning of value".
func TestPoolTakesOnlyItsReplies(t *testing.T) {
	big := strings.Repeat("x", maxAPIReply-64)
	h := startScripted(t, "$JS.API.INFO", func(w *testnats.HostileWriter, s *scripted, reply string) {
		sid := s.sidOf("_INBOX.")
		prefix := reply[:strings.LastIndexByte(reply, '.')+1]
		for i := range 64 {
			w.Write(fmt.Sprintf("MSG %sunasked%d %s %d\r\n%s\r\n", prefix, i, sid, len(big), big))
			w.Write(fmt.Sprintf("MSG other %s %d\r\n%s\r\n", sid, len(big), big))
		}
		answer := `{"type":"io.nats.jetstream.api.v1.account_info_response","memory":1,"storage":2,"streams":3,"consumers":4}`
		for range 17 {
			w.Write(fmt.Sprintf("MSG %s %s %d\r\n%s\r\n", reply, sid, len(answer), answer))
		}
		w.Hold()
	})
	p := newTestPool(t)
	conn, err := p.Acquire(testCtx(t), "stream/ns/a", Address{Stream: "S"}, ConnSpec{System: "scripted", Servers: []string{h.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := conn.JS.AccountInfo(testCtx(t))
	if err != nil {
		t.Fatalf("the account info call failed: %v", err)
	}
	if info.Streams != 3 {
		t.Errorf("the call returned %d streams, not the reply's 3", info.Streams)
	}
	// The server's last bytes reach the client before it hangs up: what
	// came after the first reply was read, and refused, by then.
	deadline := time.Now().Add(10 * time.Second)
	for h.Sent() < int64(128*len(big)) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	for range 50 {
		if in := conn.NC.Stats().InMsgs; in != 1 {
			t.Fatalf("nats.go took %d messages, want the one reply", in)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAdvisoryFloodIsHeldWithinItsBudget: a server floods the advisory
// subscription with 4096 advisories of 4 KiB (16 MiB) while the pool's
// handler is held (a user's wake-up blocks). What nats.go holds for the
// handler (its own count of the subscription's pending bytes) stays within
// maxAdvisoriesHeldPerConn; once the handler runs again, the users of the
// connection are woken for what was dropped; closing the connection gives
// back every byte to the process-wide budget. The careless variant (the
// guard admitting every advisory, nats.go's limits off) holds all 16 MiB:
// measured 4096 advisories, 16 MiB, pending.
func TestAdvisoryFloodIsHeldWithinItsBudget(t *testing.T) {
	const n, size = 4096, 4 << 10
	payload := strings.Repeat("a", size)
	var sent atomic.Bool
	h := startScripted(t, "$JS.API.INFO", func(w *testnats.HostileWriter, s *scripted, reply string) {
		sid := s.sidOf(advisorySubject)
		for range n {
			w.Write(fmt.Sprintf("MSG $JS.EVENT.ADVISORY.STREAM.UPDATED.S %s %d\r\n%s\r\n", sid, size, payload))
		}
		sent.Store(true)
		w.Hold()
	})
	release := make(chan struct{})
	var woken atomic.Int32
	p := newTestPool(t)
	p.OnChange = func(User) {
		<-release
		woken.Add(1)
	}
	conn, err := p.Acquire(testCtx(t), "stream/ns/a", Address{Stream: "S"}, ConnSpec{System: "scripted", Servers: []string{h.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	// The request starts the flood; it gets no reply.
	ctx, cancel := context.WithTimeout(testCtx(t), 200*time.Millisecond)
	defer cancel()
	_, _ = conn.JS.AccountInfo(ctx)
	poll(t, func() error {
		if !sent.Load() {
			return errors.New("the server is still sending")
		}
		return nil
	})
	// What the guard read it has decided on; give nats.go a moment's
	// worth of reads (a negative over a window, not one look).
	for range 25 {
		msgs, bytes, err := conn.advisories.Pending()
		if err != nil {
			t.Fatal(err)
		}
		if bytes > maxAdvisoriesHeldPerConn {
			t.Fatalf("nats.go holds %d advisories, %d bytes, for the held handler: over the %d a connection may", msgs, bytes, maxAdvisoriesHeldPerConn)
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(release)
	poll(t, func() error {
		if woken.Load() < 2 {
			// One for the advisory the handler held, one for the drop.
			return fmt.Errorf("the user was woken %d times", woken.Load())
		}
		return nil
	})
	conn.NC.Close()
	poll(t, func() error {
		if !advisoriesHeld.TryTake("", maxAdvisoriesHeld) {
			return errors.New("the process-wide advisory budget is not whole again after the connection closed")
		}
		advisoriesHeld.Give("", maxAdvisoriesHeld)
		return nil
	})
}

// TestReserveCallsBoundsWaitingReplies: passes past maxCallsInFlight wait
// for one to end, and go on when one does.
func TestReserveCallsBoundsWaitingReplies(t *testing.T) {
	var releases []func()
	for range maxCallsInFlight / maxAPIReply {
		r, err := ReserveCalls(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	ctx, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
	defer cancel()
	if _, err := ReserveCalls(ctx); err == nil {
		t.Fatal("a pass past the budget did not wait")
	}
	releases[0]()
	r, err := ReserveCalls(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	r()
	for _, r := range releases[1:] {
		r()
	}
}
