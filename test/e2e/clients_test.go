package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/internal/jetstream"
)

// checkUsersClients: the credentials in <name>-client let a client in (it
// shows in /connz as that user of the application account) and carry
// messages and JetStream through the cluster; no or wrong credentials are
// refused.
func checkUsersClients(t *testing.T, f *formed) {
	t.Helper()
	cred := credentials(t, f)
	user, password := cred["user"], cred["password"]
	if user == "" || password == "" {
		t.Fatalf("credentials Secret keys %v, want user and password", keys(cred))
	}
	ip0, ip2 := f.IP(f.Pods[0]), f.IP(f.Pods[2])
	ca := addrTLS(t, f)
	nc0, err := connect(t, "tls://"+ip0+":4222", nats.UserInfo(user, password), nats.Name("e2e-users"), ca)
	if err != nil {
		t.Fatalf("connecting to %s with the credentials Secret: %v", f.Pods[0], err)
	}
	nc2, err := connect(t, "tls://"+ip2+":4222", nats.UserInfo(user, password), ca)
	if err != nil {
		t.Fatalf("connecting to %s with the credentials Secret: %v", f.Pods[2], err)
	}
	acrossRoutes(t, nc0, nc2)
	publishToJetStream(t, nc0)
	authorizedAs(t, ip0, "e2e-users", user, "APP")

	refused(t, "tls://"+ip0+":4222", ca)
	refused(t, "tls://"+ip0+":4222", nats.UserInfo(user, "not-"+password), ca)
	// Without TLS: refused before any credential is sent.
	if _, err := connect(t, "nats://"+ip0+":4222", nats.UserInfo(user, password)); err == nil {
		t.Error("a client without TLS was let in")
	}
	// The Secret's ready-made URL names the client Service, reached here
	// through the harness's cluster DNS.
	if _, err := connect(t, cred["url"], nats.SetCustomDialer(jetstream.DialerFunc(cluster.Dial)), clusterTLS(t, cred)); err != nil {
		t.Errorf("connecting with the Secret's url and ca.crt: %v", err)
	}
}

// checkTokenClients: a client that knows only tls://<token>@<ip>:4222 and the CA
// gets in; no or a wrong token is refused.
func checkTokenClients(t *testing.T, f *formed) {
	t.Helper()
	cred := credentials(t, f)
	token := cred["token"]
	if token == "" {
		t.Fatalf("credentials Secret keys %v, want token", keys(cred))
	}
	ip0, ip1 := f.IP(f.Pods[0]), f.IP(f.Pods[1])
	ca := addrTLS(t, f)
	nc0, err := connect(t, "tls://"+token+"@"+ip0+":4222", nats.Name("e2e-token"), ca)
	if err != nil {
		t.Fatalf("connecting to %s with the token URL: %v", f.Pods[0], err)
	}
	nc1, err := connect(t, "tls://"+token+"@"+ip1+":4222", ca)
	if err != nil {
		t.Fatalf("connecting to %s with the token URL: %v", f.Pods[1], err)
	}
	acrossRoutes(t, nc0, nc1)
	publishToJetStream(t, nc0)
	authorizedAs(t, ip0, "e2e-token", "[REDACTED]", "")

	refused(t, "tls://"+ip0+":4222", ca)
	refused(t, "tls://not-"+token+"@"+ip0+":4222", ca)
	if _, err := connect(t, cred["url"], nats.SetCustomDialer(jetstream.DialerFunc(cluster.Dial)), clusterTLS(t, cred)); err != nil {
		t.Errorf("connecting with the Secret's url and ca.crt: %v", err)
	}
}

// acrossRoutes publishes on one server and receives on another: the routes
// carry client traffic. Interest takes a moment to cross the route, so
// publishing repeats until a message arrives.
func acrossRoutes(t *testing.T, pub, sub *nats.Conn) {
	t.Helper()
	s, err := sub.SubscribeSync("e2e.hello")
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Flush(); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		if err := pub.Publish("e2e.hello", []byte("hello")); err != nil {
			return err
		}
		if err := pub.Flush(); err != nil {
			return err
		}
		msg, err := s.NextMsg(roundTripTimeout)
		if err != nil {
			return fmt.Errorf("published on %s, nothing on %s: %w", pub.ConnectedServerName(), sub.ConnectedServerName(), err)
		}
		if string(msg.Data) != "hello" {
			return fmt.Errorf("received %q", msg.Data)
		}
		return nil
	})
}

// publishToJetStream makes a 3-replica stream and has a message
// acknowledged by it: the meta group places streams and a quorum stores.
func publishToJetStream(t *testing.T, nc *nats.Conn) {
	t.Helper()
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(testCtx(t), wait)
	defer cancel()
	// A new meta leader learns its peers' state a moment after it is
	// elected: until then placement answers "no suitable peers". A create
	// that times out may have gone through; the same config again is fine.
	eventually(t, wait, func() error {
		_, err := js.CreateStream(ctx, natsjs.StreamConfig{Name: "E2E", Subjects: []string{"e2e.js.>"}, Replicas: 3})
		return err
	})
	ack, err := js.Publish(ctx, "e2e.js.one", []byte("stored"))
	if err != nil {
		t.Fatalf("publishing to the R3 stream: %v", err)
	}
	if ack.Stream != "E2E" || ack.Sequence != 1 {
		t.Errorf("ack %+v, want stream E2E sequence 1", ack)
	}
}

// authorizedAs: /connz?auth=true of the server at ip lists the named
// connection as that user (and account, when given).
func authorizedAs(t *testing.T, ip, name, user, account string) {
	t.Helper()
	eventually(t, wait, func() error {
		var c connz
		if err := monitor(ip, "/connz?auth=true", &c); err != nil {
			return err
		}
		for _, conn := range c.Connections {
			if conn.Name != name {
				continue
			}
			if conn.AuthorizedUser != user || (account != "" && conn.Account != account) {
				return fmt.Errorf("connection %s is user %q in account %q, want %q in %q", name, conn.AuthorizedUser, conn.Account, user, account)
			}
			return nil
		}
		return fmt.Errorf("no connection named %s in /connz", name)
	})
}

// refused: the server turns the client away with an authorization
// violation, not some other failure.
func refused(t *testing.T, url string, opts ...nats.Option) {
	t.Helper()
	nc, err := connect(t, url, opts...)
	if err == nil {
		nc.Close()
		t.Fatalf("a client with %s was let in", redact(url))
	}
	if !errors.Is(err, nats.ErrAuthorization) && !strings.Contains(strings.ToLower(err.Error()), "authorization violation") {
		t.Fatalf("a client with %s failed with %v, want an authorization violation", redact(url), err)
	}
}

// redact keeps credentials out of test logs.
func redact(url string) string {
	if at := strings.LastIndex(url, "@"); at >= 0 {
		return "nats://<credentials>" + url[at:]
	}
	return url
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
