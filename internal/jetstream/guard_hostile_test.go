package jetstream

import (
	"bufio"
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hostileServer speaks just enough NATS to be connected to, then does what
// misbehave says. It counts what it managed to send, and records when the
// client hung up on it.
type hostileServer struct {
	ln net.Listener
	// sent counts what the first connection sent; the client reconnects,
	// and later connections are not counted.
	sent    atomic.Int64
	conns   atomic.Int32
	hungUp  chan struct{}
	hungSet atomic.Bool
}

// hostileBytes is how much a hostile server sends at most: far beyond any
// limit of the guard, and little enough that a test of an unguarded client
// fails on a count rather than by exhausting the machine.
const hostileBytes = 256 << 20

const fakeInfo = `INFO {"server_id":"FAKE","server_name":"fake","version":"2.15.3","proto":1,"headers":true,"max_payload":1048576}` + "\r\n"

// startHostile serves one behaviour: infoFirst replaces the INFO line, and
// afterPong is sent once the client has connected (its PING answered).
func startHostile(t *testing.T, infoFirst func(w *hostileWriter), afterPong func(w *hostileWriter)) *hostileServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hostileServer{ln: ln, hungUp: make(chan struct{})}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go h.serve(c, infoFirst, afterPong)
		}
	}()
	return h
}

func (h *hostileServer) url() string { return "nats://" + h.ln.Addr().String() }

func (h *hostileServer) serve(c net.Conn, infoFirst, afterPong func(w *hostileWriter)) {
	defer c.Close()
	w := &hostileWriter{c: c, h: h, first: h.conns.Add(1) == 1}
	if infoFirst != nil {
		infoFirst(w)
		return
	}
	if !w.write(fakeInfo) {
		return
	}
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			h.hangUp()
			return
		}
		if strings.HasPrefix(line, "PING") {
			if !w.write("PONG\r\n") {
				return
			}
			go func() { // the client's hanging up ends this read
				_, _ = r.WriteTo(discard{})
				if w.first {
					h.hangUp()
				}
			}()
			afterPong(w)
			return
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func (h *hostileServer) hangUp() {
	if h.hungSet.CompareAndSwap(false, true) {
		close(h.hungUp)
	}
}

type hostileWriter struct {
	c     net.Conn
	h     *hostileServer
	first bool
	sent  int64
}

// write sends s, reporting false once the client has hung up.
func (w *hostileWriter) write(s string) bool {
	_ = w.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	n, err := w.c.Write([]byte(s))
	w.sent += int64(n)
	if w.first {
		w.h.sent.Add(int64(n))
	}
	if err != nil {
		if w.first {
			w.h.hangUp()
		}
		return false
	}
	return true
}

// endless sends prefix, then letters without a newline, up to hostileBytes.
func (w *hostileWriter) endless(prefix string) {
	if !w.write(prefix) {
		return
	}
	chunk := strings.Repeat("a", 64<<10)
	for w.sent < hostileBytes {
		if !w.write(chunk) {
			return
		}
	}
	w.hold()
}

// hold keeps the connection open after the hostile bytes, so that only the
// client can end it.
func (w *hostileWriter) hold() {
	select {
	case <-w.h.hungUp:
	case <-time.After(30 * time.Second):
	}
}

func TestGuardSurvivesHostileServers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		infoFirst func(w *hostileWriter)
		afterPong func(w *hostileWriter)
	}{
		{name: "a MSG of 10^18 bytes", afterPong: func(w *hostileWriter) {
			// nats.go would allocate this in its read loop: a panic no
			// recover can catch, and the operator gone.
			w.write("MSG _INBOX.x 1 999999999999999999\r\n")
			w.hold()
		}},
		{name: "a MSG just over the cap", afterPong: func(w *hostileWriter) {
			w.write("MSG _INBOX.x 1 8388609\r\n")
			w.hold()
		}},
		{name: "an HMSG whose total is huge", afterPong: func(w *hostileWriter) {
			w.write("HMSG _INBOX.x 1 12 9999999999\r\n")
			w.hold()
		}},
		{name: "an endless -ERR line", afterPong: func(w *hostileWriter) { w.endless("-ERR 'a") }},
		{name: "an endless INFO line after connect", afterPong: func(w *hostileWriter) { w.endless("INFO {") }},
		{name: "an endless first INFO", infoFirst: func(w *hostileWriter) { w.endless("INFO {") }},
		{name: "a silent server", infoFirst: func(w *hostileWriter) { w.hold() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := startHostile(t, tc.infoFirst, tc.afterPong)
			p := newTestPool(t)
			start := time.Now()
			conn, err := p.Acquire(testCtx(t), "stream/ns/a", Address{Stream: "S"}, ConnSpec{System: "hostile", Servers: []string{h.url()}})
			if err == nil {
				// Connected before the server turned: the next request fails,
				// and the guard has closed the connection.
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				if _, err := conn.JS.AccountInfo(ctx); err == nil {
					t.Fatal("a JetStream request through a hostile server succeeded")
				}
			}
			if time.Since(start) > 20*time.Second {
				t.Errorf("took %s", time.Since(start))
			}
			if tc.name != "a silent server" {
				select {
				case <-h.hungUp:
				case <-time.After(15 * time.Second):
					t.Fatalf("the client did not hang up; the server sent %d MiB", h.sent.Load()>>20)
				}
				if sent := h.sent.Load(); sent > 8<<20 {
					t.Errorf("the client took %d MiB before hanging up", sent>>20)
				}
			}
		})
	}
}
