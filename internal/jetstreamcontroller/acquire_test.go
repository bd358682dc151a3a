package jetstreamcontroller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/serverbudget"
)

// TestAcquireFailedTellsTheConnectionLimit: a connection refused for the
// operator's allowance is a condition that says so (reason
// ConnectionLimit, the limit and its flag), retried; any other dial
// failure reads the same generic message, whatever the error says.
// Careless variant (every error as ConnectionFailed, as before): the
// resource cannot tell a full allowance from an unreachable server.
func TestAcquireFailedTellsTheConnectionLimit(t *testing.T) {
	limit := fmt.Errorf("%w: 16 to the servers of namespace %q (--server-connections-per-namespace)", serverbudget.ErrConnectionLimit, "a")
	for _, tc := range []struct {
		name        string
		err         error
		wantReason  string
		wantMessage string
	}{
		{"the allowance", limit, reasonConnectionLimit, "--server-connections-per-namespace"},
		{"the allowance, wrapped", fmt.Errorf("dialing: %w", limit), reasonConnectionLimit, `namespace "a"`},
		{"an unreachable server", errors.New("dial tcp 10.0.0.7:4222: connection refused"), reasonConnectionFailed, connectionFailedMessage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := acquireFailed(context.Background(), jetstream.ConnSpec{System: "s"}, tc.err)
			if out.reason != tc.wantReason || !strings.Contains(out.message, tc.wantMessage) || !out.retry {
				t.Errorf("acquireFailed = %+v, want reason %s, a message with %q, retried", out, tc.wantReason, tc.wantMessage)
			}
			if tc.wantReason == reasonConnectionFailed && strings.Contains(out.message, "10.0.0.7") {
				t.Errorf("the message tells the tenant the address: %q", out.message)
			}
		})
	}
}
