package backup

import (
	"context"
	"io"
	"time"
)

// A pacer holds a transfer to rate bytes per second, on average since its
// first bytes: after bytes that ran ahead it sleeps. The snapshot's flow
// control then holds the server back (a backup), or the server waits for
// the next chunk (a restore), so nothing piles up in memory.
type pacer struct {
	ctx   context.Context
	rate  int64
	start time.Time
	n     int64
	// now and sleep are the clock; tests give their own.
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
}

func newPacer(ctx context.Context, rate int64) *pacer {
	return &pacer{ctx: ctx, rate: rate, now: time.Now, sleep: sleepCtx}
}

// begin marks the transfer's start, before its first bytes.
func (p *pacer) begin() {
	if p.start.IsZero() {
		p.start = p.now()
	}
}

// moved counts n more bytes and waits until they are due.
func (p *pacer) moved(n int) error {
	p.n += int64(n)
	due := p.start.Add(time.Duration(float64(p.n) / float64(p.rate) * float64(time.Second)))
	if ahead := due.Sub(p.now()); ahead > 0 {
		return p.sleep(p.ctx, ahead)
	}
	return nil
}

type pacedWriter struct {
	w io.Writer
	p *pacer
}

// paced is w held to rate bytes per second; a rate of 0 does not pace.
func paced(ctx context.Context, w io.Writer, rate int64) io.Writer {
	if rate <= 0 {
		return w
	}
	return &pacedWriter{w: w, p: newPacer(ctx, rate)}
}

func (pw *pacedWriter) Write(b []byte) (int, error) {
	pw.p.begin()
	n, err := pw.w.Write(b)
	if err != nil {
		return n, err
	}
	return n, pw.p.moved(n)
}

type pacedReader struct {
	r io.Reader
	p *pacer
}

// pacedReading is r held to rate bytes per second; a rate of 0 does not
// pace.
func pacedReading(ctx context.Context, r io.Reader, rate int64) io.Reader {
	if rate <= 0 {
		return r
	}
	return &pacedReader{r: r, p: newPacer(ctx, rate)}
}

func (pr *pacedReader) Read(b []byte) (int, error) {
	pr.p.begin()
	n, err := pr.r.Read(b)
	if n > 0 {
		if perr := pr.p.moved(n); perr != nil {
			return n, perr
		}
	}
	return n, err
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
