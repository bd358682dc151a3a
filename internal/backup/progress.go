package backup

import (
	"context"
	"io"
	"sync/atomic"
	"time"
)

// watchProgress tells progress the count each second it changed, and the
// last count when stopped. With cancel, a count that stays the same for
// StallTimeout cancels with ErrStalled: a snapshot whose server stopped
// sending. The returned stop waits for the watch to end.
func watchProgress(ctx context.Context, cancel context.CancelCauseFunc, count *atomic.Int64, progress func(int64)) (stop func()) {
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		last, lastAt := int64(-1), time.Now()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case now := <-tick.C:
				n := count.Load()
				if n != last {
					last, lastAt = n, now
					progress(n)
				} else if cancel != nil && now.Sub(lastAt) >= StallTimeout {
					cancel(ErrStalled)
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-ended
		progress(count.Load())
	}
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
