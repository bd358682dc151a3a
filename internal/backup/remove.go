package backup

import (
	"context"
	"errors"
	"fmt"
)

// Remove deletes the backup or the set at l: only a finished one (not a
// link to one), so that a wrong place deletes nothing. A place that holds
// nothing is removed already. A set's backups go first, its list last.
func Remove(ctx context.Context, l Location) error {
	if gone, err := l.gone(ctx); gone || err != nil {
		return err
	}
	if _, backups, err := ReadSet(ctx, l); err == nil {
		for _, m := range backups {
			if err := Remove(ctx, l.child(m.Stream)); err != nil {
				return err
			}
		}
		return l.removeFinished(ctx)
	} else if !errors.Is(err, ErrNotABackup) {
		return err
	}
	if _, _, err := Read(ctx, l); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrNotABackup, l, err)
	}
	return l.removeFinished(ctx)
}
