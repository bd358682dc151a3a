package testnats

import (
	"bufio"
	"io"
	"net"
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
func (w *HostileWriter) Write(s string) bool {
	_ = w.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	n, err := w.c.Write([]byte(s))
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
