package jetstream

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/internal/serverbudget"
	"github.com/kubenats/kubenats/internal/testmem"
	"github.com/kubenats/kubenats/test/testnats"
)

// smallReadBuffer dials TCP with a small receive buffer: what a server
// has written is then in the client's hands, not the kernel's, once the
// write returns (give or take 64 KiB).
type smallReadBuffer struct{}

func (smallReadBuffer) Dial(network, address string) (net.Conn, error) {
	c, err := net.Dial(network, address)
	if err == nil {
		_ = c.(*net.TCPConn).SetReadBuffer(32 << 10)
	}
	return c, err
}

// TestHostileServersAtOnceStayWithinTheBudget: twelve fake servers, of
// four namespaces, each announce a message of 4 MiB on a connection of the
// kind the system account makes (Connect), send all of it but its end,
// and hold. In a child process under GOMEMLIMIT (testmem), with a memory
// budget of 16 MiB (8 MiB a namespace): each message needs 8 MiB less the
// base of its connection, so two of them are taken, each in its own
// namespace, and the other connections are closed before their messages
// are read. The child's peak RSS stays within the budget and the
// connections' bases (16 MiB + 12 x 256 KiB; measured: +9.2 to +10.5 MiB).
//
// Careless variant (KUBENATS_TESTMEM_CARELESS=1 go test -run
// TestHostileServersAtOnceStayWithinTheBudget ./internal/jetstream/): no
// reservation, as before the budget (a budget without limit): every
// connection holds its server's 4 MiB (measured: +40.0 to +50.5 MiB), as 100
// stalled pool connections held 115 MiB.
func TestHostileServersAtOnceStayWithinTheBudget(t *testing.T) {
	const servers, size = 12, 4 << 20
	const budget, share = 16 << 20, 8 << 20
	stall := func([]byte) error {
		memory := serverbudget.New(budget, share)
		if testmem.Careless() {
			memory = serverbudget.New(1<<40, 0)
		}
		conns := serverbudget.New(100, 100)
		var wg sync.WaitGroup
		var mu sync.Mutex
		taken := map[string]int{}
		for i := range servers {
			ns := fmt.Sprintf("ns%d", i%4)
			sent := make(chan bool, 1)
			h := testnats.StartHostile(t, nil, func(w *testnats.HostileWriter) {
				sent <- w.WriteMessage("_INBOX.x", "1", size, true)
				w.Hold()
			})
			nc, err := Connect(h.URL(), Guard{Largest: MaxSystemReply, Namespace: ns, Memory: memory, Connections: conns, Transport: smallReadBuffer{}},
				nats.NoReconnect(), nats.Timeout(3*time.Second))
			if err != nil {
				return err
			}
			defer nc.Close()
			wg.Add(1)
			go func() {
				defer wg.Done()
				select {
				case whole := <-sent:
					if whole {
						mu.Lock()
						taken[ns]++
						mu.Unlock()
					}
				case <-h.HungUp():
				}
			}()
		}
		wg.Wait()
		if held := memory.Held(); !testmem.Careless() && held > budget {
			return fmt.Errorf("the connections hold %d bytes of a budget of %d", held, budget)
		}
		for ns, n := range taken {
			if !testmem.Careless() && n > 1 {
				return fmt.Errorf("namespace %s had %d messages of 4 MiB taken, past its share of 8 MiB", ns, n)
			}
		}
		return nil
	}
	r := testmem.Run(t, 1<<30, func() []byte { return nil }, stall)
	own := r.PeakRSS - r.InputRSS
	t.Logf("peak RSS %s (%s before connecting, %s more); error %q", testmem.MiB(r.PeakRSS), testmem.MiB(r.InputRSS), testmem.MiB(own), r.Err)
	if r.Err != "" {
		t.Error(r.Err)
	}
	if bound := int64(budget + servers*serverbudget.MaxConnectionBase); own > bound {
		t.Errorf("%d fake servers raised the operator's peak RSS by %s, over the budget and the connections' bases, %s", servers, testmem.MiB(own), testmem.MiB(bound))
	}
}

// TestPoolRefusesTheConnectionPastTheNamespaceShare: with 100 connections
// a namespace, the pool dials 100 connections for namespace a's servers,
// refuses the 101st with ErrConnectionLimit before dialling it (the server
// counts 100 clients), still dials one for namespace b, and dials a's
// once one of a's has closed. Careless variant (Acquire without
// openConnection, as before): the 101st is dialled.
func TestPoolRefusesTheConnectionPastTheNamespaceShare(t *testing.T) {
	s := poolServer(t, 0)
	p := newTestPool(t)
	p.Connections = serverbudget.New(1000, 100)
	spec := func(ns string, i int) ConnSpec {
		return ConnSpec{System: "test", Servers: []string{s.ClientURL()}, Namespace: ns, User: "u", Password: fmt.Sprint(i)}
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	errs := make([]error, 100)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = p.Acquire(testCtx(t), User(fmt.Sprintf("Stream/a/s%d", i)), Address{Stream: "S"}, spec("a", i))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("100 idle connections: %d KiB of heap each, server side included", (int64(after.HeapInuse)-int64(before.HeapInuse))/100>>10)
	_, err := p.Acquire(testCtx(t), "Stream/a/s100", Address{Stream: "S"}, spec("a", 100))
	if !errors.Is(err, serverbudget.ErrConnectionLimit) {
		t.Fatalf("the 101st connection for namespace a: %v, want ErrConnectionLimit", err)
	}
	clients(t, s, 100)
	if _, err := p.Acquire(testCtx(t), "Stream/b/s0", Address{Stream: "S"}, spec("b", 0)); err != nil {
		t.Fatalf("namespace b was refused while only a was at its share: %v", err)
	}
	p.Release("Stream/a/s0")
	p.closeIdle(time.Now().Add(time.Second), false)
	poll(t, func() error {
		_, err := p.Acquire(testCtx(t), "Stream/a/s100", Address{Stream: "S"}, spec("a", 100))
		return err
	})
}
