package jetstream

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/nats-io/nats.go"
)

// countingLogger counts the lines logged, and keeps the last.
func countingLogger() (logr.Logger, *atomic.Int64, func() string) {
	var n atomic.Int64
	var mu sync.Mutex
	var last string
	l := funcr.New(func(prefix, args string) {
		n.Add(1)
		mu.Lock()
		last = args
		mu.Unlock()
	}, funcr.Options{})
	return l, &n, func() string { mu.Lock(); defer mu.Unlock(); return last }
}

// TestErrorLimiter: the first errorBurst errors are logged, then one per
// errorInterval, each telling how many were dropped before it.
func TestErrorLimiter(t *testing.T) {
	now := time.Unix(0, 0)
	log, lines, last := countingLogger()
	h := errorHandler(log, "test", func() time.Time { return now })
	err := fmt.Errorf("nats: permissions violation: %s", strings.Repeat("x", 4096))
	for range 10000 {
		h(nil, nil, err)
	}
	if n := lines.Load(); n != errorBurst {
		t.Fatalf("%d lines for 10000 errors at one instant, want %d", n, errorBurst)
	}
	for _, step := range []struct {
		after     time.Duration
		wantLines int64
		// firstSays is what the first line logged in the step tells.
		firstSays string
	}{
		{errorInterval / 2, errorBurst, ""},                         // half a token: nothing
		{errorInterval / 2, errorBurst + 1, `"suppressed"=19995`},   // one token: one line, with the count
		{errorInterval, errorBurst + 2, `"suppressed"=9999`},        // one more
		{10 * errorInterval, 2*errorBurst + 2, `"suppressed"=9999`}, // the bucket refills to its burst only
	} {
		now = now.Add(step.after)
		before := lines.Load()
		var first string
		for range 10000 {
			h(nil, nil, err)
			if first == "" && lines.Load() > before {
				first = last()
			}
		}
		if n := lines.Load(); n != step.wantLines {
			t.Fatalf("after %s more: %d lines, want %d", step.after, n, step.wantLines)
		}
		if !strings.Contains(first, step.firstSays) {
			t.Errorf("after %s more: first line %q does not contain %q", step.after, first, step.firstSays)
		}
	}
	if l := len(last()); l > maxLoggedError+200 {
		t.Errorf("a logged line of %d bytes: the error text is not bounded", l)
	}
}

// floodingServer speaks just enough NATS to accept a connection, then
// sends n -ERR lines that nats.go hands to the error handler without
// closing the connection (a permissions violation).
func floodingServer(t *testing.T, n int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = conn.Write([]byte(`INFO {"server_id":"FLOOD","version":"2.15.3","proto":1,"max_payload":1048576,"headers":true}` + "\r\n"))
		r := bufio.NewReader(conn)
		for { // CONNECT, then PING
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if strings.HasPrefix(line, "PING") {
				break
			}
		}
		_, _ = conn.Write([]byte("PONG\r\n"))
		w := bufio.NewWriter(conn)
		for i := range n {
			fmt.Fprintf(w, "-ERR 'Permissions Violation for Subscription to \"s.%d\"'\r\n", i)
		}
		_, _ = w.WriteString("PING\r\n")
		_ = w.Flush()
		_, _ = r.ReadString('\n') // the client's PONG: every line was read
		time.Sleep(time.Second)
	}()
	return ln.Addr().String()
}

// TestServerErrorFloodIsRateLimited: 10000 -ERR lines from one server,
// through a real nats.go connection, give a bounded number of log lines.
// Careless variant caught: today's main, whose handler logged every error
// (10000 lines here; some 180 MB/s from a server that loops).
func TestServerErrorFloodIsRateLimited(t *testing.T) {
	const sent = 10000
	log, lines, _ := countingLogger()
	var seen atomic.Int64
	h := ErrorHandler(log, "flood")
	nc, err := nats.Connect("nats://"+floodingServer(t, sent), nats.NoReconnect(),
		nats.ErrorHandler(func(c *nats.Conn, s *nats.Subscription, err error) { seen.Add(1); h(c, s, err) }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	deadline := time.Now().Add(20 * time.Second)
	for seen.Load() < sent && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if seen.Load() < sent {
		t.Fatalf("nats.go handed over %d of %d errors", seen.Load(), sent)
	}
	// The flood took well under errorInterval: the burst, perhaps one more.
	if n := lines.Load(); n > errorBurst+1 {
		t.Errorf("%d log lines for %d -ERR lines, want at most %d", n, sent, errorBurst+1)
	}
}
