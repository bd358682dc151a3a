package natsmon

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/internal/serverbudget"
	"github.com/kubenats/kubenats/test/testnats"
)

// TestFetchJSZFromSystemAsksARealServer: the ping's request, in the
// operator's own spelling of nats-server's options, gets a view back from
// a real server, read by the bounded decoder.
func TestFetchJSZFromSystemAsksARealServer(t *testing.T) {
	srv := testnats.Start(t, 0, func(o *server.Options) {
		o.ServerName = "n-0"
		app := server.NewAccount("APP")
		sys := server.NewAccount("SYS")
		o.Accounts = []*server.Account{app, sys}
		o.SystemAccount = "SYS"
		o.Users = []*server.User{{Username: "sys", Password: "s", Account: sys}}
	})
	nc, err := nats.Connect(testnats.URL(srv), nats.UserInfo("sys", "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	views, err := FetchJSZFromSystem(context.Background(), nc, 1, 5*time.Second)
	if err != nil || views["n-0"] == nil {
		t.Fatalf("FetchJSZFromSystem = %v, %v; want the view of n-0", views, err)
	}
	// A wait with nobody left to answer ends with what came, not an error.
	start := time.Now()
	views, err = FetchJSZFromSystem(context.Background(), nc, 2, 300*time.Millisecond)
	if err != nil || len(views) != 1 || time.Since(start) > 5*time.Second {
		t.Fatalf("FetchJSZFromSystem expecting 2 = %v, %v after %s", views, err, time.Since(start))
	}
}

// TestReserveBoundsTheBytesInFlight: reads reserve from the process's one
// memory budget for what servers send (serverbudget.Memory).
func TestReserveBoundsTheBytesInFlight(t *testing.T) {
	budget, _ := serverbudget.Memory.Limits()
	if _, err := Reserve(context.Background(), budget+1); err == nil {
		t.Fatal("a reservation past the whole budget was granted")
	}
	release, err := Reserve(context.Background(), budget)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Reserve(ctx, 1); err == nil {
		t.Fatal("a reservation past the spent budget was granted")
	}
	release()
	again, err := Reserve(context.Background(), maxJSZBody)
	if err != nil {
		t.Fatalf("the released budget is not there again: %v", err)
	}
	again()
}
