package jetstream

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/test/testnats"
)

func TestGuardSurvivesHostileServers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		infoFirst func(w *testnats.HostileWriter)
		afterPong func(w *testnats.HostileWriter)
	}{
		{name: "a MSG of 10^18 bytes", afterPong: func(w *testnats.HostileWriter) {
			// nats.go would allocate this in its read loop: a panic no
			// recover can catch, and the operator gone.
			w.Write("MSG _INBOX.x 1 999999999999999999\r\n")
			w.Hold()
		}},
		{name: "a MSG just over the cap", afterPong: func(w *testnats.HostileWriter) {
			w.Write("MSG _INBOX.x 1 " + strconv.Itoa(maxAPIReply+1) + "\r\n")
			w.Hold()
		}},
		{name: "an HMSG whose total is huge", afterPong: func(w *testnats.HostileWriter) {
			w.Write("HMSG _INBOX.x 1 12 9999999999\r\n")
			w.Hold()
		}},
		{name: "an endless -ERR line", afterPong: func(w *testnats.HostileWriter) { w.Endless("-ERR 'a") }},
		{name: "an endless INFO line after connect", afterPong: func(w *testnats.HostileWriter) { w.Endless("INFO {") }},
		{name: "an endless first INFO", infoFirst: func(w *testnats.HostileWriter) { w.Endless("INFO {") }},
		{name: "a silent server", infoFirst: func(w *testnats.HostileWriter) { w.Hold() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := testnats.StartHostile(t, tc.infoFirst, tc.afterPong)
			p := newTestPool(t)
			start := time.Now()
			conn, err := p.Acquire(testCtx(t), "stream/ns/a", Address{Stream: "S"}, ConnSpec{System: "hostile", Servers: []string{h.URL()}})
			if err == nil {
				// Connected before the server turned: the next request fails,
				// and the guard has closed the connection.
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				if _, err := conn.JS.AccountInfo(ctx); err == nil {
					t.Fatal("a JetStream request through a hostile server succeeded")
				}
				if tc.name != "a silent server" {
					// Not left to reconnect to the same server and hold
					// requests meanwhile: closed for good.
					poll(t, func() error {
						if !conn.NC.IsClosed() {
							return errors.New("the pooled connection is still open")
						}
						return nil
					})
				}
			}
			if time.Since(start) > 20*time.Second {
				t.Errorf("took %s", time.Since(start))
			}
			if tc.name != "a silent server" {
				select {
				case <-h.HungUp():
				case <-time.After(15 * time.Second):
					t.Fatalf("the client did not hang up; the server sent %d MiB", h.Sent()>>20)
				}
				if sent := h.Sent(); sent > 8<<20 {
					t.Errorf("the client took %d MiB before hanging up", sent>>20)
				}
			}
		})
	}
}

// TestGuardOptionsGuardConnectionsOutsideThePool: the operator's own short
// connections (the system account's, to pods running a tenant's image) are
// guarded too.
func TestGuardOptionsGuardConnectionsOutsideThePool(t *testing.T) {
	h := testnats.StartHostile(t, nil, func(w *testnats.HostileWriter) {
		w.Write("MSG _INBOX.x 1 999999999999999999\r\n")
		w.Hold()
	})
	opts := append(GuardOptions(Guard{Largest: MaxSystemReply}), nats.NoReconnect(), nats.Timeout(3*time.Second))
	nc, err := nats.Connect(h.URL(), opts...)
	if err == nil {
		defer nc.Close()
	}
	select {
	case <-h.HungUp():
	case <-time.After(15 * time.Second):
		t.Fatal("the client did not hang up on the hostile server")
	}
}
