package e2e_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// publishWindow is how many publishes may await their ack at once.
const publishWindow = 256

// publishAll publishes n messages on <prefix>.0 to <prefix>.9, at most a
// window of them unacknowledged at a time, and checks that each was
// acknowledged by the stream with a sequence of its own: none lost, none
// stored twice. Message i is messagePayload(i).
func publishAll(ctx context.Context, t *testing.T, nc *nats.Conn, stream, prefix string, n int) int {
	t.Helper()
	// A full window blocks the next publish until an ack frees a slot; the
	// client's 200 ms default for that wait is short for a busy machine.
	js, err := natsjs.New(nc, natsjs.WithPublishAsyncMaxPending(publishWindow), natsjs.WithPublishAsyncTimeout(wait))
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	acks := make([]natsjs.PubAckFuture, 0, n)
	for i := range n {
		f, err := js.PublishAsync(fmt.Sprintf("%s.%d", prefix, i%10), messagePayload(i), natsjs.WithStallWait(wait))
		if err != nil {
			t.Fatalf("publishing message %d: %v", i, err)
		}
		acks = append(acks, f)
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		t.Fatalf("%d of %d publishes still unacknowledged: %v", js.PublishAsyncPending(), n, ctx.Err())
	}
	seqs := map[uint64]bool{}
	for i, f := range acks {
		select {
		case ack := <-f.Ok():
			if ack.Stream != stream || seqs[ack.Sequence] {
				t.Fatalf("message %d: ack %+v (stream %s, a sequence of its own expected)", i, ack, stream)
			}
			seqs[ack.Sequence] = true
		case err := <-f.Err():
			t.Fatalf("message %d was not stored: %v", i, err)
		case <-ctx.Done():
			t.Fatalf("message %d: neither ack nor error: %v", i, ctx.Err())
		}
	}
	d := time.Since(began)
	t.Logf("published %d messages with acks to stream %s in %.2fs (%.0f msg/s)", n, stream, d.Seconds(), float64(n)/d.Seconds())
	return len(seqs)
}

// messagePayload is the body of the i-th message published.
func messagePayload(i int) []byte { return fmt.Appendf(nil, "message-%05d", i) }
