package accounts

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/testnats"
)

// TestAccountsOnARealServer runs the JWTs this package makes on a real
// nats-server with the full resolver, pushed through the system account,
// as nats.conf of mode jwt configures it. One server for the sub-tests, in
// order (each builds on the accounts the one before pushed); the last one
// restarts it.
func TestAccountsOnARealServer(t *testing.T) {
	f := newTrust(t)
	port, store := testnats.FreePort(t), t.TempDir()
	s := f.startServer(t, port, store)
	url := testnats.URL(s)

	a, b := newAccount(t, teamA), newAccount(t, teamB)
	signers := map[AccountRef]*account{teamA: a, teamB: b}
	specA := v1alpha1.NatsAccountSpec{Limits: v1alpha1.AccountLimits{Connections: ptr.To[int64](2)}}
	specB := v1alpha1.NatsAccountSpec{Imports: []v1alpha1.AccountImport{{
		Account: v1alpha1.AccountRef{Name: "orders", Namespace: "team-a"}, Subject: "orders.>", Type: v1alpha1.ExportStream,
		LocalSubject: "from-a.orders.>"}}}
	var revoked map[string]int64
	pushAll := func(t *testing.T) {
		t.Helper()
		peers := map[AccountRef]Peer{teamA: {PublicKey: a.pub, Exports: specA.Exports}, teamB: {PublicKey: b.pub, Exports: specB.Exports}}
		f.push(t, url, f.sign(t, Account{Ref: teamA, Spec: specA, PublicKey: a.pub, SigningKey: a.signingPub, Revoked: revoked}, peers, signers))
		f.push(t, url, f.sign(t, Account{Ref: teamB, Spec: specB, PublicKey: b.pub, SigningKey: b.signingPub}, peers, signers))
	}
	pushAll(t)
	credsA := userCreds(t, User{Name: "team-a/app", Account: a.pub}, a.signing)
	credsB := userCreds(t, User{Name: "team-b/app", Account: b.pub}, b.signing)

	// Careless variant: one account for all (both users in A) delivers
	// A's publish to B's subscriber.
	t.Run("a publish in A is not seen in B", func(t *testing.T) {
		ua, ub := connect(t, url, credsA), connect(t, url, credsB)
		var seenB atomic.Int64
		subscribe(t, ub, "orders.>", &seenB)
		var seenA atomic.Int64
		subscribe(t, ua, "orders.>", &seenA)
		publishUntil(t, ua, "orders.1", &seenA)
		poll.Holds(t, time.Second, func() error { return none(&seenB) })
	})

	// Careless variant: an import written because the importer asks for
	// it. AccountClaims leaves it out until A exports to B; then the same
	// subscriber gets A's messages.
	t.Run("an import works only once exported", func(t *testing.T) {
		ua, ub := connect(t, url, credsA), connect(t, url, credsB)
		var seen atomic.Int64
		subscribe(t, ub, "from-a.orders.>", &seen)
		var own atomic.Int64
		subscribe(t, ua, "orders.>", &own)
		publishUntil(t, ua, "orders.2", &own)
		poll.Holds(t, time.Second, func() error { return none(&seen) })

		specA.Exports = []v1alpha1.AccountExport{{Subject: "orders.>", Type: v1alpha1.ExportStream,
			To: []v1alpha1.AccountRef{{Name: "billing", Namespace: "team-b"}}}}
		pushAll(t)
		poll.Until(t, 5*time.Second, func() error {
			if err := ua.Publish("orders.3", nil); err != nil {
				return err
			}
			_ = ua.Flush()
			return some(&seen)
		})
	})

	t.Run("the third connection is refused by the server, and a raised limit lets it in without a restart", func(t *testing.T) {
		start := startTime(t, s)
		connect(t, url, credsA)
		connect(t, url, credsA)
		_, err := dial(url, credsA)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "maximum account active connections") {
			t.Fatalf("third connection: %v, want the server's refusal", err)
		}
		specA.Limits.Connections = ptr.To[int64](3)
		pushAll(t)
		poll.Until(t, 5*time.Second, func() error {
			nc, err := dial(url, credsA)
			if err != nil {
				return err
			}
			nc.Close()
			return nil
		})
		if got := startTime(t, s); !got.Equal(start) {
			t.Fatalf("server start %v, was %v: it restarted", got, start)
		}
		specA.Limits.Connections = nil
		pushAll(t)
	})

	t.Run("a write past the storage limit is refused by the server", func(t *testing.T) {
		specA.Limits.JetStream = &v1alpha1.AccountJetStreamLimits{DiskStorage: resource.NewQuantity(64<<10, resource.BinarySI)}
		pushAll(t)
		nc := connect(t, url, credsA)
		js, err := nc.JetStream()
		if err != nil {
			t.Fatal(err)
		}
		// No max_bytes of its own: the account's limit is what bites.
		if _, err := js.AddStream(&nats.StreamConfig{Name: "ORDERS", Subjects: []string{"store.>"}}); err != nil {
			t.Fatal(err)
		}
		payload := make([]byte, 4<<10)
		var stored int
		for ; stored < 64; stored++ {
			if _, err = js.Publish("store.x", payload); err != nil {
				break
			}
		}
		if err == nil || !strings.Contains(err.Error(), "resource limits exceeded for account") {
			t.Fatalf("after %d writes of 4KiB: %v, want the server's refusal (resource limits exceeded for account)", stored, err)
		}
		if stored == 0 || stored*len(payload) > 64<<10 {
			t.Fatalf("stored %d messages of 4KiB under a limit of 64KiB", stored)
		}
	})

	// Careless variants: a user signed by a key its account does not
	// list (here B's signing key, claiming A), and one signed by the
	// operator's key, which the jwt library already refuses to sign.
	t.Run("a user signed by another key than its account's is refused", func(t *testing.T) {
		creds := userCreds(t, User{Name: "team-a/rogue", Account: a.pub}, b.signing)
		if nc, err := dial(url, creds); err == nil {
			nc.Close()
			t.Fatal("the server took a user of A signed with B's signing key")
		}
		claims, _ := UserClaims(User{Name: "team-a/rogue", Account: a.pub, PublicKey: pub(t, seed(t, nkeys.PrefixByteUser), nkeys.PrefixByteUser)})
		if _, err := Sign(claims, f.opSeed); err == nil {
			t.Fatal("a user JWT was signed with the operator key")
		}
	})

	// Careless variant: a revocation kept only in memory (never pushed in
	// the account JWT) leaves the client connected, and a restarted
	// server takes the creds.
	t.Run("a revoked user is dropped within 5s and refused after a restart", func(t *testing.T) {
		us := seed(t, nkeys.PrefixByteUser)
		upub := pub(t, us, nkeys.PrefixByteUser)
		claims, _ := UserClaims(User{Name: "team-a/leaving", Account: a.pub, PublicKey: upub})
		creds := writeFile(t, must[[]byte](t)(Creds(must[string](t)(Sign(claims, a.signing)), us)))
		closed := make(chan struct{})
		connect(t, url, creds, nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
		revoked = map[string]int64{upub: time.Now().Unix()}
		pushAll(t)
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Fatal("the revoked user's connection is still open after 5s")
		}
		if nc, err := dial(url, creds); err == nil {
			nc.Close()
			t.Fatal("the revoked creds connect")
		}
		s.Shutdown()
		s.WaitForShutdown()
		s = f.startServer(t, port, store)
		connect(t, url, credsA) // the account is back from the resolver's store
		poll.Holds(t, time.Second, func() error {
			if nc, err := dial(url, creds); err == nil {
				nc.Close()
				return errors.New("the revoked creds connect to the restarted server")
			}
			return nil
		})
	})
}

func subscribe(t *testing.T, nc *nats.Conn, subject string, n *atomic.Int64) {
	t.Helper()
	if _, err := nc.Subscribe(subject, func(*nats.Msg) { n.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// publishUntil publishes until the publisher's own subscriber saw one:
// the messages a window later checks for had the time to travel.
func publishUntil(t *testing.T, nc *nats.Conn, subject string, own *atomic.Int64) {
	t.Helper()
	poll.Until(t, 5*time.Second, func() error {
		if err := nc.Publish(subject, nil); err != nil {
			return err
		}
		_ = nc.Flush()
		return some(own)
	})
}

func none(n *atomic.Int64) error {
	if v := n.Load(); v != 0 {
		return fmt.Errorf("%d messages arrived", v)
	}
	return nil
}

func some(n *atomic.Int64) error {
	if n.Load() == 0 {
		return errors.New("no message yet")
	}
	return nil
}

// startTime is when the server process started, as it reports it.
func startTime(t *testing.T, s *server.Server) time.Time {
	t.Helper()
	v, err := s.Varz(nil)
	if err != nil {
		t.Fatal(err)
	}
	return v.Start
}
