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
