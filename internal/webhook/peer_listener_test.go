package webhook

import (
	"net"
	"sync"
	"testing"
	"time"
)

// TestOnePeerCannotTakeEverySlot: one address opening far more
// connections than the replica accepts holds maxConnectionsPerPeer of
// them, and keeps holding no more over a window; another address still
// gets in; once the first peer closes one, it may open one again.
// Careless variant run (boundListener without limitPerPeer): the flood
// holds all 32 slots ("one peer holds 32 connections, want at most 8"),
// and the second peer is never accepted.
func TestOnePeerCannotTakeEverySlot(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := boundListener(raw)
	t.Cleanup(func() { _ = ln.Close() })
	var (
		mu       sync.Mutex
		accepted = map[string][]net.Conn{}
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted[remoteIP(c)] = append(accepted[remoteIP(c)], c)
			mu.Unlock()
		}
	}()
	count := func(peer string) int { mu.Lock(); defer mu.Unlock(); return len(accepted[peer]) }
	dialFrom := func(peer string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(peer)}, Timeout: 2 * time.Second}
		c, err := d.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}

	const flood, other = "127.0.0.1", "127.0.0.2"
	for range maxConnections + 8 {
		dialFrom(flood)
	}
	waitFor(t, func() bool { return count(flood) >= maxConnectionsPerPeer })
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n := count(flood); n != maxConnectionsPerPeer {
			t.Fatalf("one peer holds %d connections, want at most %d", n, maxConnectionsPerPeer)
		}
	}
	dialFrom(other)
	deadline := time.Now().Add(3 * time.Second)
	for count(other) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the second peer was not accepted while the first held its slots")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A closed connection gives its peer's place back.
	mu.Lock()
	_ = accepted[flood][0].Close()
	mu.Unlock()
	dialFrom(flood)
	waitFor(t, func() bool { return count(flood) == maxConnectionsPerPeer+1 })
}
