package backup

import (
	"context"
	"io"
	"time"
)

// pacedWriter writes no faster than rate bytes per second, on average
// since its first write: it sleeps after a write that ran ahead. The
// snapshot's flow control then holds the server back, so nothing piles up
// in memory. A rate of 0 does not pace.
type pacedWriter struct {
	ctx   context.Context
	w     io.Writer
	rate  int64
	start time.Time
	n     int64
	// now and sleep are the clock; tests give their own.
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
}

func paced(ctx context.Context, w io.Writer, rate int64) io.Writer {
	if rate <= 0 {
		return w
	}
	return &pacedWriter{ctx: ctx, w: w, rate: rate, now: time.Now, sleep: sleepCtx}
}

func (p *pacedWriter) Write(b []byte) (int, error) {
	if p.start.IsZero() {
		p.start = p.now()
	}
	n, err := p.w.Write(b)
	p.n += int64(n)
	if err != nil {
		return n, err
	}
	// When the bytes so far are due, at the rate: n/rate seconds in.
	due := p.start.Add(time.Duration(float64(p.n) / float64(p.rate) * float64(time.Second)))
	if ahead := due.Sub(p.now()); ahead > 0 {
		if err := p.sleep(p.ctx, ahead); err != nil {
			return n, err
		}
	}
	return n, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
