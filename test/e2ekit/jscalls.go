package e2ekit

import (
	"context"
	"errors"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
)

// callTimeout bounds one JetStream API call of a test. NATS delivers a
// reply at most once: one lost on a route that closed meanwhile (the
// duplicate routes of a forming cluster) holds a call for all of its
// context's deadline, which for a test's long context is minutes. nats.go
// gives a call without a deadline this same 5 s.
const callTimeout = 5 * time.Second

// CreateStream creates the stream of cfg, each attempt bounded by
// callTimeout, retried for Wait. Asking for the same configuration again
// answers with the stream, so a retry after a lost reply is safe.
func CreateStream(t *testing.T, js natsjs.JetStream, cfg natsjs.StreamConfig) natsjs.Stream {
	t.Helper()
	var stream natsjs.Stream
	Eventually(t, Wait, func() error {
		var err error
		stream, err = withCallTimeout(t, func(ctx context.Context) (natsjs.Stream, error) { return js.CreateStream(ctx, cfg) })
		return err
	})
	return stream
}

// PurgeStream purges the stream, each attempt bounded, retried for Wait:
// purging twice purges nothing more.
func PurgeStream(t *testing.T, stream natsjs.Stream) {
	t.Helper()
	Eventually(t, Wait, func() error {
		_, err := withCallTimeout(t, func(ctx context.Context) (struct{}, error) { return struct{}{}, stream.Purge(ctx) })
		return err
	})
}

// DeleteStream deletes the stream named name, each attempt bounded,
// retried for Wait: a retry that finds it gone after a lost reply is done.
func DeleteStream(t *testing.T, js natsjs.JetStream, name string) {
	t.Helper()
	Eventually(t, Wait, func() error {
		_, err := withCallTimeout(t, func(ctx context.Context) (struct{}, error) { return struct{}{}, js.DeleteStream(ctx, name) })
		if errors.Is(err, natsjs.ErrStreamNotFound) {
			return nil
		}
		return err
	})
}

func withCallTimeout[T any](t *testing.T, call func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(Ctx(t), callTimeout)
	defer cancel()
	return call(ctx)
}
