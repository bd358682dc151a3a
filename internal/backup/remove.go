package backup

import (
	"context"
	"fmt"
)

// Remove deletes the backup at l: only a finished backup (not a link to
// one), so that a wrong place deletes nothing. A place that holds nothing
// is removed already.
func Remove(ctx context.Context, l Location) error {
	if gone, err := l.gone(ctx); gone || err != nil {
		return err
	}
	if _, _, err := Read(ctx, l); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrNotABackup, l, err)
	}
	return l.removeFinished(ctx)
}
