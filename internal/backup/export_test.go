package backup

import (
	"context"
	"errors"
	"io"
)

// CutShort is l with its backups' writes failing at the file named at:
// as a pod killed there, when killed (nothing is cleaned up), or as a
// store refusing that write (the backup's own abort runs).
func CutShort(l Location, at string, killed bool) Location { return cutShort{l, at, killed} }

var errCutShort = errors.New("cut short")

type cutShort struct {
	Location
	at     string
	killed bool
}

func (c cutShort) create(ctx context.Context) (draft, error) {
	d, err := c.Location.create(ctx)
	if err != nil {
		return nil, err
	}
	return &cutDraft{draft: d, c: c}, nil
}

type cutDraft struct {
	draft
	c   cutShort
	cut bool
}

func (d *cutDraft) data(ctx context.Context, file string, sizeHint int64) (io.WriteCloser, error) {
	if file == d.c.at {
		d.cut = true
		return nil, errCutShort
	}
	return d.draft.data(ctx, file, sizeHint)
}

func (d *cutDraft) put(ctx context.Context, file string, b []byte) error {
	if file == d.c.at {
		d.cut = true
		return errCutShort
	}
	return d.draft.put(ctx, file, b)
}

func (d *cutDraft) abort() {
	if d.cut && d.c.killed {
		return
	}
	d.draft.abort()
}
