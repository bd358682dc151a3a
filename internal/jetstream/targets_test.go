package jetstream

import (
	"bufio"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/kubenats/kubenats/test/testnats"
)

// TestTargetPolicy: the deny list, entry by entry. The rows marked
// "issue 17" are the careless variant of main before it, which allowed
// them: the other cloud metadata addresses, NAT64 forms of a denied IPv4
// address, the rest of 0.0.0.0/8 and the API server's current addresses
// (its Service and endpoints, read while the operator runs).
func TestTargetPolicy(t *testing.T) {
	api := netip.MustParseAddr("10.96.0.1")
	endpoint := netip.MustParseAddr("172.18.0.2") // the kubernetes Service's endpoint, learnt later
	strict := &TargetPolicy{APIServer: []netip.Addr{api}, APIServerNow: func() []netip.Addr { return []netip.Addr{endpoint} }}
	open := &TargetPolicy{AllowLocal: true, APIServer: []netip.Addr{api}}
	for _, tc := range []struct {
		addr    string
		refused bool
	}{
		{"127.0.0.1", true},
		{"127.3.2.1", true},
		{"::1", true},
		{"::ffff:127.0.0.1", true},
		{"169.254.169.254", true}, // cloud metadata
		{"169.254.0.1", true},
		{"fe80::1", true},
		{"0.0.0.0", true}, // dialling it reaches the local host
		{"0.1.2.3", true}, // issue 17: so does the rest of 0.0.0.0/8
		{"::", true},
		{"10.96.0.1", true}, // the API server
		{"::ffff:10.96.0.1", true},
		{"172.18.0.2", true},        // issue 17: the API server's endpoint
		{"::ffff:172.18.0.2", true}, // issue 17
		{"fd00:ec2::254", true},     // issue 17: AWS metadata over IPv6
		{"100.100.100.200", true},   // issue 17: Alibaba metadata
		{"::ffff:100.100.100.200", true},
		{"64:ff9b::a9fe:a9fe", true},           // issue 17: NAT64 of 169.254.169.254
		{"64:ff9b::7f00:1", true},              // issue 17: NAT64 of 127.0.0.1
		{"64:ff9b::a60:1", true},               // issue 17: NAT64 of 10.96.0.1
		{"64:ff9b::6464:64c8", true},           // issue 17: NAT64 of 100.100.100.200
		{"64:ff9b::ac12:2", true},              // issue 17: NAT64 of the endpoint
		{"64:ff9b:1::a9fe:a9fe", true},         // issue 17: local-use prefix, /96 layout
		{"64:ff9b:1:a9fe:00a9:fe00::", true},   // issue 17: local-use prefix, /48 layout
		{"64:ff9b:1:00a9:00fe:a9fe::", true},   // issue 17: local-use prefix, /56 layout
		{"64:ff9b:1:0:00a9:fea9:fe00:0", true}, // issue 17: local-use prefix, /64 layout
		{"64:ff9b::cb00:7105", false},          // NAT64 of 203.0.113.5: allowed as it is
		{"64:ff9b:1::cb00:7105", false},
		{"10.96.0.2", false},
		{"10.0.0.7", false}, // in-cluster systems live in private ranges
		{"192.168.1.10", false},
		{"100.100.100.201", false},
		{"203.0.113.5", false},
		{"2001:db8::1", false},
		{"fd00:ec2::253", false},
	} {
		err := strict.Allows(netip.MustParseAddr(tc.addr))
		if tc.refused != errors.Is(err, ErrTargetRefused) {
			t.Errorf("Allows(%s) = %v, refused want %v", tc.addr, err, tc.refused)
		}
		if err := open.Allows(netip.MustParseAddr(tc.addr)); err != nil {
			t.Errorf("with AllowLocal, Allows(%s) = %v", tc.addr, err)
		}
	}
}

// TestTargetPolicyAllowedCIDRs: with --connection-allowed-cidrs, only
// addresses inside them are dialled, and the deny list still holds there.
func TestTargetPolicyAllowedCIDRs(t *testing.T) {
	p := &TargetPolicy{
		APIServer:    []netip.Addr{netip.MustParseAddr("10.96.0.1")},
		AllowedCIDRs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd12::/16")},
	}
	for _, tc := range []struct {
		addr    string
		refused bool
	}{
		{"10.1.2.3", false},
		{"::ffff:10.1.2.3", false},
		{"fd12::7", false},
		{"10.96.0.1", true}, // inside, and the API server
		{"192.168.1.10", true},
		{"203.0.113.5", true},
		{"fd13::7", true},
		{"127.0.0.1", true},
	} {
		err := p.Allows(netip.MustParseAddr(tc.addr))
		if tc.refused != errors.Is(err, ErrTargetRefused) {
			t.Errorf("Allows(%s) = %v, refused want %v", tc.addr, err, tc.refused)
		}
	}
	local := &TargetPolicy{AllowLocal: true, AllowedCIDRs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
	if err := local.Allows(netip.MustParseAddr("127.0.0.1")); !errors.Is(err, ErrTargetRefused) {
		t.Errorf("AllowLocal reaches past the allowed CIDRs: %v", err)
	}
}

func TestCheckServerURLs(t *testing.T) {
	for _, tc := range []struct {
		urls []string
		want string // "" accepted
	}{
		{[]string{"nats://nats.example:4222", "tls://10.0.0.1:4222"}, ""},
		{[]string{"nats://[2001:db8::1]:4222"}, ""},
		{[]string{"nats://a:4222,nats://b:4222"}, "one URL"},
		{[]string{"nats://a:4222 nats://b:4222"}, "one URL"},
		{[]string{"ws://a:8080"}, "nats:// or tls://"},
		{[]string{"wss://a:443"}, "nats:// or tls://"},
		{[]string{"nats://user:pw@a:4222"}, "credentials"},
		{[]string{"nats://:4222"}, "with a host"},
		{[]string{"a:4222"}, "with a host"}, // scheme "a", no host
	} {
		err := CheckServerURLs(tc.urls)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckServerURLs(%v) = %v", tc.urls, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckServerURLs(%v) = %v, want %q", tc.urls, err, tc.want)
		}
	}
}

// TestPoolRefusesLocalTargetsOfExternalSystems: a system kubenats does not
// run is not dialled on loopback unless the operator allows it, and the
// operator's own systems are not held to that.
func TestPoolRefusesLocalTargetsOfExternalSystems(t *testing.T) {
	s := poolServer(t, 0)
	external := ConnSpec{System: "connection/ns", Servers: []string{s.ClientURL()}, External: true}

	strict := newTestPool(t)
	_, err := strict.Acquire(testCtx(t), "stream/ns/a", Address{Stream: "S"}, external)
	if !errors.Is(err, ErrTargetRefused) {
		t.Fatalf("Acquire of a loopback external system = %v, want ErrTargetRefused", err)
	}
	if n := s.NumClients(); n != 0 {
		t.Fatalf("the server saw %d clients", n)
	}
	if _, err := strict.Acquire(testCtx(t), "stream/ns/b", Address{Stream: "S"}, specFor(s)); err != nil {
		t.Fatalf("Acquire of a system kubenats runs: %v", err)
	}

	allowing := newTestPool(t)
	allowing.Targets.AllowLocal = true
	if _, err := allowing.Acquire(testCtx(t), "stream/ns/c", Address{Stream: "S"}, external); err != nil {
		t.Fatalf("Acquire with AllowLocal: %v", err)
	}
}

// TestPoolIgnoresServersAnExternalSystemTellsOf: the connect_urls of a
// server kubenats does not run would send the operator anywhere.
func TestPoolIgnoresServersAnExternalSystemTellsOf(t *testing.T) {
	h := testnats.StartHostile(t, func(w *testnats.HostileWriter) {
		if !w.Write(`INFO {"server_id":"FAKE","version":"2.15.3","proto":1,"headers":true,"max_payload":1048576,"connect_urls":["169.254.169.254:80","127.0.0.1:1"]}` + "\r\n") {
			return
		}
		r := bufio.NewReader(w.Conn())
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if strings.HasPrefix(line, "PING") && !w.Write("PONG\r\n") {
				return
			}
		}
	}, nil)
	p := newTestPool(t)
	p.Targets.AllowLocal = true // the fake server runs on 127.0.0.1
	conn, err := p.Acquire(testCtx(t), "stream/ns/a", Address{Stream: "S"},
		ConnSpec{System: "connection/ns", Servers: []string{h.URL()}, External: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := conn.NC.DiscoveredServers(); len(got) != 0 {
		t.Fatalf("discovered servers kept: %v", got)
	}
	if got := conn.NC.Servers(); len(got) != 1 {
		t.Fatalf("server list = %v, want only the one named", got)
	}
}

// TestPoolHoldsExternalSystemsToAllowedCIDRs: the allow-list is checked
// where the guard dials, on the address it resolved; systems kubenats runs
// are not held to it.
func TestPoolHoldsExternalSystemsToAllowedCIDRs(t *testing.T) {
	s := poolServer(t, 0)
	p := newTestPool(t)
	p.Targets.AllowLocal = true
	p.Targets.AllowedCIDRs = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	external := ConnSpec{System: "connection/ns", Servers: []string{s.ClientURL()}, External: true}
	if _, err := p.Acquire(testCtx(t), "stream/ns/a", Address{Stream: "S"}, external); !errors.Is(err, ErrTargetRefused) {
		t.Fatalf("Acquire outside the allowed CIDRs = %v, want ErrTargetRefused", err)
	}
	if n := s.NumClients(); n != 0 {
		t.Fatalf("the server saw %d clients", n)
	}
	if _, err := p.Acquire(testCtx(t), "stream/ns/b", Address{Stream: "S"}, specFor(s)); err != nil {
		t.Fatalf("Acquire of a system kubenats runs: %v", err)
	}
	p.Targets.AllowedCIDRs = append(p.Targets.AllowedCIDRs, netip.MustParsePrefix("127.0.0.0/8"))
	if _, err := p.Acquire(testCtx(t), "stream/ns/c", Address{Stream: "S"}, external); err != nil {
		t.Fatalf("Acquire inside the allowed CIDRs: %v", err)
	}
}
