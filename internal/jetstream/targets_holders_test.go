package jetstream

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// TestTargetPolicyOtherNamespaces: an address held by a pod or Service of
// another namespace than the resource's is refused, one of its own or of
// nobody's is not; an address whose holders cannot be told is refused;
// OtherNamespaces opens it. Careless variants caught: no Holders check
// (the policy of main, which let every tenant reach the others' pods
// through the operator), a check that any holder is ns (an address held
// by ns and by another, as a reused one may be, passes), and failing open
// when the API server does not answer.
func TestTargetPolicyOtherNamespaces(t *testing.T) {
	held := map[string][]string{
		"10.244.1.5": {"bank"},
		"10.96.7.7":  {"shop"},
		"10.244.2.9": {"shop", "bank"},
	}
	holders := func(_ context.Context, a netip.Addr) ([]string, error) {
		if a.String() == "10.244.9.9" {
			return nil, errors.New("the API server does not answer")
		}
		return held[a.String()], nil
	}
	p := &TargetPolicy{Holders: holders}
	for _, tc := range []struct {
		addr, want string
	}{
		{"10.244.1.5", "another namespace"},
		{"10.244.2.9", "another namespace"},
		{"10.96.7.7", ""},
		{"192.0.2.10", ""},
		{"::ffff:10.244.1.5", "another namespace"},
		{"10.244.9.9", "cannot be told"},
	} {
		err := p.AllowsFrom(context.Background(), "shop", netip.MustParseAddr(tc.addr))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s from shop: %v, want allowed", tc.addr, err)
		case tc.want != "" && (!errors.Is(err, ErrTargetRefused) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s from shop: %v, want refused (%s)", tc.addr, err, tc.want)
		}
	}
	p.OtherNamespaces = true
	if err := p.AllowsFrom(context.Background(), "shop", netip.MustParseAddr("10.244.1.5")); err != nil {
		t.Errorf("with OtherNamespaces: %v", err)
	}
}

// TestPoolKeepsExternalSystemsInTheirNamespace: the check is made where
// the guard dials, for the namespace of the resources the connection
// serves; two namespaces naming the same server never share a connection
// (one allowed would carry the other past the check). Careless variant
// caught: the namespace left out of the spec's key (the second Acquire
// gets the first one's connection).
func TestPoolKeepsExternalSystemsInTheirNamespace(t *testing.T) {
	s := poolServer(t, 0)
	p := newTestPool(t)
	p.Targets.AllowLocal = true // the server runs on 127.0.0.1
	p.Targets.Holders = func(context.Context, netip.Addr) ([]string, error) { return []string{"shop"}, nil }
	spec := func(ns string) ConnSpec {
		return ConnSpec{System: "connection/x", Servers: []string{s.ClientURL()}, External: true, Namespace: ns}
	}
	if _, err := p.Acquire(testCtx(t), "stream/shop/a", Address{Stream: "S"}, spec("shop")); err != nil {
		t.Fatalf("Acquire from the server's own namespace: %v", err)
	}
	if _, err := p.Acquire(testCtx(t), "stream/bank/a", Address{Stream: "S"}, spec("bank")); !errors.Is(err, ErrTargetRefused) {
		t.Fatalf("Acquire from another namespace = %v, want ErrTargetRefused", err)
	}
	if n := s.NumClients(); n != 1 {
		t.Fatalf("the server saw %d clients, want the first one's only", n)
	}
}
