package jetstream

import (
	"bufio"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/test/testnats"
)

// dialRecorder is a listener that counts every connection made to it: an
// address a server tells of and the operator must never dial.
type dialRecorder struct {
	ln    net.Listener
	dials atomic.Int32
}

func startDialRecorder(t *testing.T) *dialRecorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &dialRecorder{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.dials.Add(1)
			c.Close()
		}
	}()
	return r
}

// steeringServer tells of elsewhere twice, in its first INFO and in an
// INFO after the client's first PING (as nats-server does when its
// cluster changes), then hangs up, so that the client reconnects and
// would take a discovered server first.
func steeringServer(t *testing.T, elsewhere string) *testnats.Hostile {
	info := `INFO {"server_id":"STEER","version":"2.15.3","proto":1,"headers":true,"max_payload":1048576,"connect_urls":["` + elsewhere + `"]}` + "\r\n"
	return testnats.StartHostile(t, func(w *testnats.HostileWriter) {
		if !w.Write(info) {
			return
		}
		r := bufio.NewReader(w.Conn())
		for {
			_ = w.Conn().SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			line, err := r.ReadString('\n')
			if err != nil {
				return // quiet for a while: hang up
			}
			if strings.HasPrefix(line, "PING") && (!w.Write("PONG\r\n") || !w.Write(info)) {
				return
			}
		}
	}, nil)
}

// TestPoolNeverDialsDiscoveredServers: whatever a server says in
// connect_urls, the operator dials only the servers it was given, for
// the systems it runs as for the others: a server that runs spec.image
// could otherwise steer the operator's connections (and its credentials)
// to any address, past the target policy of external systems. Over a
// window of reconnects, the address told of sees no connection. Catches
// the careless variant of main before issue 17, which ignored discovered
// servers only for connection.servers (External): the NatsCluster row
// fails there.
func TestPoolNeverDialsDiscoveredServers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		external bool
	}{
		{"a NatsCluster kubenats runs", false},
		{"connection.servers", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := startDialRecorder(t)
			h := steeringServer(t, rec.ln.Addr().String())
			p := newTestPool(t)
			p.Targets.AllowLocal = true // both listeners are on 127.0.0.1
			spec := ConnSpec{System: "steered", Servers: []string{h.URL()}, External: tc.external}
			conn, err := p.Acquire(testCtx(t), "stream/ns/a", Address{Stream: "S"}, spec)
			if err != nil {
				t.Fatal(err)
			}
			// Several reconnects: the server hangs up after 300 ms of
			// quiet, nats.go waits up to a second and a little more.
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				if n := rec.dials.Load(); n != 0 {
					t.Fatalf("the address the server told of was dialled %d times", n)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if got := conn.NC.Servers(); len(got) != 1 {
				t.Errorf("server list = %v, want only the one named", got)
			}
		})
	}
}

// TestGuardOptionsIgnoreDiscoveredServers: the system-account connections
// of the NatsCluster reconciler (GuardOptions) ignore connect_urls too.
func TestGuardOptionsIgnoreDiscoveredServers(t *testing.T) {
	o := nats.GetDefaultOptions()
	for _, opt := range GuardOptions(Guard{Largest: MaxSystemReply}) {
		if err := opt(&o); err != nil {
			t.Fatal(err)
		}
	}
	if !o.IgnoreDiscoveredServers {
		t.Error("GuardOptions leave IgnoreDiscoveredServers off")
	}
}
