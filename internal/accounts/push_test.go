package accounts

import (
	"context"
	"testing"
	"time"

	"github.com/kubenats/kubenats/test/testnats"
)

// TestPushCountsOnlyTheServersItExpects: a real server's answer to a push
// counts under its own name only. A push that expects it and a server
// that never answers ends with its context, one of two taken; a push that
// expects only that stranger takes none; one that expects the server
// alone is done. Careless variant watched failing: every answer counted,
// whoever sent it (the push that expects the stranger alone returned at
// once, taken by the server's answer).
func TestPushCountsOnlyTheServersItExpects(t *testing.T) {
	f := newTrust(t)
	s := f.startServer(t, testnats.FreePort(t), t.TempDir())
	nc := connect(t, testnats.URL(s), f.sysCreds)
	defer nc.Close()
	a := newAccount(t, teamA)
	accountJWT := f.sign(t, Account{Ref: teamA, PublicKey: a.pub, SigningKey: a.signingPub}, nil, map[AccountRef]*account{teamA: a})
	push := func(servers ...string) (int, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return Push(ctx, nc, accountJWT, servers)
	}
	name := nc.ConnectedServerName()
	if took, err := push(name, "nats-9"); err == nil || took != 1 {
		t.Errorf("expecting %s and nats-9: took %d, error %v; want 1 and the context's end", name, took, err)
	}
	if took, err := push("nats-9"); err == nil || took != 0 {
		t.Errorf("expecting nats-9 alone: took %d, error %v; want 0 and the context's end", took, err)
	}
	if took, err := push(name); err != nil || took != 1 {
		t.Errorf("expecting %s: took %d, error %v", name, took, err)
	}
}

// TestTakeCountsOnlyExpectedServers: each answer to a push, as take
// judges it. Careless variant watched failing: the refusal of a server
// not expected failing the push (what Push did before take).
func TestTakeCountsOnlyExpectedServers(t *testing.T) {
	ok := func(name string) string { return `{"server":{"name":"` + name + `"},"data":{"code":200}}` }
	refused := func(name string) string {
		return `{"server":{"name":"` + name + `"},"error":{"code":500,"description":"no"}}`
	}
	for _, tc := range []struct {
		name    string
		answers []string
		took    int
		err     bool
	}{
		{name: "expected servers count", answers: []string{ok("nats-0"), ok("nats-1")}, took: 2},
		{name: "one server counts once", answers: []string{ok("nats-0"), ok("nats-0")}, took: 1},
		{name: "a stranger counts for nothing", answers: []string{ok("nats-9")}, took: 0},
		{name: "a stranger's refusal counts for nothing", answers: []string{refused("nats-9"), ok("nats-0")}, took: 1},
		{name: "an expected server's refusal fails the push", answers: []string{refused("nats-1")}, err: true},
		{name: "an answer without a name counts for nothing", answers: []string{`{"data":{"code":200}}`, "not json"}, took: 0},
	} {
		took, expected := map[string]bool{}, map[string]bool{"nats-0": true, "nats-1": true}
		var err error
		for _, a := range tc.answers {
			if err = take(took, expected, []byte(a)); err != nil {
				break
			}
		}
		if len(took) != tc.took || (err != nil) != tc.err {
			t.Errorf("%s: took %d, error %v; want %d, error %t", tc.name, len(took), err, tc.took, tc.err)
		}
	}
}
