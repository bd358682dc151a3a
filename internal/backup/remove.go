package backup

import (
	"errors"
	"fmt"
	"os"
)

// Remove deletes the backup in dir: only a directory (not a link to one)
// that holds a finished backup, so that a wrong path deletes nothing. A
// dir that does not exist is removed already.
func Remove(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is not a directory", ErrNotABackup, dir)
	}
	if _, _, err := Read(dir); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrNotABackup, dir, err)
	}
	// RemoveAll removes links inside dir, never what they point to.
	return os.RemoveAll(dir)
}
