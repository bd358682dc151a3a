package e2e_test

import (
	"testing"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// appConn connects to the given servers of f the way an application in
// the cluster would, with the credentials of the <name>-client Secret (user
// and password, or the token), but at the pods' DNS names: the client
// Service would pick one server for us, and these scenarios want to say
// which.
func appConn(t *testing.T, f *formed, name string, pods ...string) *nats.Conn {
	t.Helper()
	cred := credentials(t, f)
	opts := []nats.Option{nats.Name(name), clusterDNS()}
	if cred["token"] != "" {
		opts = append(opts, nats.Token(cred["token"]))
	} else {
		opts = append(opts, nats.UserInfo(cred["user"], cred["password"]))
	}
	nc, err := connect(t, podURLs(f, pods), opts...)
	if err != nil {
		t.Fatalf("connecting to %v with the credentials Secret: %v", pods, err)
	}
	return nc
}

// appJetStream is the JetStream API of an application connection.
func appJetStream(t *testing.T, nc *nats.Conn) natsjs.JetStream {
	t.Helper()
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}
