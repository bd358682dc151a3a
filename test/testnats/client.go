package testnats

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// JetStream is a test's own JetStream client of s, closed when the test
// ends: the "someone else" who edits and deletes server objects behind
// the operator's back, or the floor a benchmark measures against.
func JetStream(tb testing.TB, s *server.Server) jetstream.JetStream {
	tb.Helper()
	return JetStreamWith(tb, s)
}

// JetStreamAs is JetStream for a server that wants a user and password.
func JetStreamAs(tb testing.TB, s *server.Server, user, password string) jetstream.JetStream {
	tb.Helper()
	return JetStreamWith(tb, s, nats.UserInfo(user, password))
}

// JetStreamWith is JetStream connected with opts (credentials, TLS).
func JetStreamWith(tb testing.TB, s *server.Server, opts ...nats.Option) jetstream.JetStream {
	tb.Helper()
	nc, err := nats.Connect(s.ClientURL(), opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	j, err := jetstream.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	return j
}
