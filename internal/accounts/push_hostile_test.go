package accounts

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/test/testnats"
)

// TestAccountConnectionsTakeNoLargeMessage: a server that runs a tenant's
// image answers on the account controller's connection with a 1 MiB
// message (four times what the controller reads in a whole push to a
// hundred servers): the connection's guard, at MaxMessage, closes it
// before nats.go allocates the message. Careless variant watched failing:
// the connection guarded at the system ping's bound (MaxSystemReply, what
// the controller's connections had before), which takes the message and
// keeps the connection.
func TestAccountConnectionsTakeNoLargeMessage(t *testing.T) {
	body := strings.Repeat("x", 1<<20)
	h := testnats.StartHostile(t, nil, func(w *testnats.HostileWriter) {
		w.Write("MSG _INBOX.claims 1 1048576\r\n" + body + "\r\n")
		w.Hold()
	})
	opts := append(jetstream.GuardOptions(jetstream.Guard{Largest: MaxMessage}), nats.NoReconnect(), nats.Timeout(3*time.Second))
	nc, err := nats.Connect(h.URL(), opts...)
	if err == nil {
		defer nc.Close()
	}
	select {
	case <-h.HungUp():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection took a 1 MiB message: still open 10 s later")
	}
}
