package testnats

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// HostileBytes is how much a hostile server sends at most: far beyond any
// limit of the operator's guard, and little enough that a test of an
// unguarded client fails on a count rather than by exhausting the machine.
const HostileBytes = 256 << 20

// HostileInfo is the INFO line a hostile server greets with.
const HostileInfo = `INFO {"server_id":"FAKE","server_name":"fake","version":"2.15.3","proto":1,"headers":true,"max_payload":1048576}` + "\r\n"

// Hostile is a fake NATS server that speaks just enough of the protocol to
// be connected to, then misbehaves. It counts what its first connection
// sent, and records when the client hung up on that one (clients
// reconnect; later connections are not counted).
type Hostile struct {
	ln      net.Listener
	sent    atomic.Int64
	conns   atomic.Int32
	hungUp  chan struct{}
	hungSet atomic.Bool
}

// StartHostile serves every connection with infoFirst, which replaces the
// whole exchange when set, or else with HostileInfo, PONG to the client's
// first PING and then afterPong.
func StartHostile(tb testing.TB, infoFirst, afterPong func(w *HostileWriter)) *Hostile {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	h := &Hostile{ln: ln, hungUp: make(chan struct{})}
	tb.Cleanup(func() { ln.Close() })
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

// URL is the server's nats:// URL.
func (h *Hostile) URL() string { return "nats://" + h.ln.Addr().String() }

// Sent is how many bytes the first connection sent.
func (h *Hostile) Sent() int64 { return h.sent.Load() }

// HungUp is closed once the client ended the first connection.
func (h *Hostile) HungUp() <-chan struct{} { return h.hungUp }

func (h *Hostile) serve(c net.Conn, infoFirst, afterPong func(w *HostileWriter)) {
	defer c.Close()
	w := &HostileWriter{c: c, h: h, first: h.conns.Add(1) == 1}
	if infoFirst != nil {
		infoFirst(w)
		return
	}
	if !w.Write(HostileInfo) {
		return
	}
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			w.hangUp()
			return
		}
		if strings.HasPrefix(line, "PING") {
			if !w.Write("PONG\r\n") {
				return
			}
			go func() { // the client's hanging up ends this read
				_, _ = io.Copy(io.Discard, r)
				w.hangUp()
			}()
			afterPong(w)
			return
		}
	}
}

// HostileWriter is one connection of a Hostile server.
type HostileWriter struct {
	c     net.Conn
	h     *Hostile
	first bool
	sent  int64
}

// Conn is the connection, for exchanges of a test's own.
func (w *HostileWriter) Conn() net.Conn { return w.c }

func (w *HostileWriter) hangUp() {
	if w.first && w.h.hungSet.CompareAndSwap(false, true) {
		close(w.h.hungUp)
	}
}

// Write sends s, reporting false once the client has hung up.
func (w *HostileWriter) Write(s string) bool { return w.WriteBytes([]byte(s)) }

// WriteBytes is Write without a copy of b.
func (w *HostileWriter) WriteBytes(b []byte) bool {
	_ = w.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	n, err := w.c.Write(b)
	w.sent += int64(n)
	if w.first {
		w.h.sent.Add(int64(n))
	}
	if err != nil {
		w.hangUp()
		return false
	}
	return true
}

// Endless sends prefix, then letters without a newline, up to
// HostileBytes, and holds the connection.
func (w *HostileWriter) Endless(prefix string) {
	if !w.Write(prefix) {
		return
	}
	chunk := strings.Repeat("a", 64<<10)
	for w.sent < HostileBytes {
		if !w.Write(chunk) {
			return
		}
	}
	w.Hold()
}

// Hold keeps the connection open until the client hangs up (at most 30s),
// so that only the client can end it.
func (w *HostileWriter) Hold() {
	select {
	case <-w.h.hungUp:
	case <-time.After(30 * time.Second):
	}
}

// WriteMessage sends "MSG subject sid size" and size bytes of payload
// (from one small chunk, so that the fake server holds little of what it
// sends), then CRLF unless stall: a server that announced a message and
// sent all but its end. It reports false once the client has hung up.
func (w *HostileWriter) WriteMessage(subject, sid string, size int, stall bool) bool {
	if !w.Write("MSG " + subject + " " + sid + " " + strconv.Itoa(size) + "\r\n") {
		return false
	}
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for left := size; left > 0; left -= len(chunk) {
		if !w.WriteBytes(chunk[:min(left, len(chunk))]) {
			return false
		}
	}
	return stall || w.Write("\r\n")
}

// StartAnswering is a fake server that reads its client: INFO, PONG to
// every PING, the client's subscriptions, and answer called (in its own
// goroutine, once a connection) when the client sends a request on
// subject, with the request's reply subject and the id of the client's
// subscription that receives it (its own subject, or a wildcard one).
func StartAnswering(tb testing.TB, subject string, answer func(w *HostileWriter, reply, sid string)) *Hostile {
	return StartHostile(tb, func(w *HostileWriter) {
		if !w.Write(HostileInfo) {
			return
		}
		subs := map[string]string{} // subject → sid
		r := bufio.NewReader(w.Conn())
		asked := false
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				w.hangUp()
				return
			}
			f := strings.Fields(line)
			switch {
			case len(f) == 0:
			case f[0] == "PING":
				w.Write("PONG\r\n")
			case f[0] == "SUB" && len(f) >= 3:
				subs[f[1]] = f[len(f)-1]
			case (f[0] == "PUB" || f[0] == "HPUB") && len(f) >= 3:
				size, _ := strconv.Atoi(f[len(f)-1])
				if _, err := r.Discard(size + 2); err != nil {
					w.hangUp()
					return
				}
				if f[1] == subject && len(f) >= 4 && !asked {
					asked = true
					go answer(w, f[2], sidFor(subs, f[2]))
				}
			}
		}
	}, nil)
}

// sidFor is the id of the subscription that receives subject: its own, or
// a wildcard one ending in ".*" over it.
func sidFor(subs map[string]string, subject string) string {
	if sid, ok := subs[subject]; ok {
		return sid
	}
	for s, sid := range subs {
		if prefix, ok := strings.CutSuffix(s, "*"); ok && strings.HasPrefix(subject, prefix) {
			return sid
		}
	}
	return "0"
}
