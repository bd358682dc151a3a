package backup

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

// TestPacedWriterKeepsTheAverageRate: at 512 KiB/s, four writes of
// 256 KiB are due at 0.5, 1, 1.5 and 2 s, so the writer sleeps what each
// ran ahead of that, and a write that came late (the clock past its due
// time) sleeps nothing; a cancelled context ends a sleep with its cause.
// Careless variant watched failing: each write paced on its own (a
// sleep of len/rate after every write, whatever time had passed: 2 s
// slept, the late writes paid twice).
func TestPacedWriterKeepsTheAverageRate(t *testing.T) {
	clock := time.Unix(0, 0)
	var slept time.Duration
	p := &pacedWriter{w: io.Discard, p: &pacer{ctx: context.Background(), rate: 512 << 10,
		now: func() time.Time { return clock },
		sleep: func(_ context.Context, d time.Duration) error {
			slept += d
			clock = clock.Add(d)
			return nil
		}}}
	chunk := make([]byte, 256<<10)
	for i := range 4 {
		if i == 2 {
			clock = clock.Add(600 * time.Millisecond) // the disk was slow
		}
		if _, err := p.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	// Due at 0.5, 1.0, 1.5 and 2.0 s: 0.5 and 0.5 slept, the third write
	// came at 1.6 s and sleeps nothing, the fourth 0.4.
	if want := 1400 * time.Millisecond; slept != want {
		t.Errorf("slept %v, want %v", slept, want)
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stopped")
	cancel(stop)
	late := paced(ctx, io.Discard, 1)
	if _, err := late.Write(chunk); !errors.Is(err, stop) {
		t.Errorf("a cancelled pace wrote on: %v", err)
	}
}
