package backup

import (
	"os"

	"golang.org/x/sys/unix"
)

// writeBack begins writing n bytes of f at off to the disk, once what was
// begun before is written: at most two ranges are in flight, and the
// write waits for the disk when the disk is the slower. An error only
// loses the head start: the flush at the end is what counts.
func writeBack(f *os.File, off, n int64) {
	fd := int(f.Fd())
	_ = unix.SyncFileRange(fd, off, n, unix.SYNC_FILE_RANGE_WRITE)
	if off > 0 {
		_ = unix.SyncFileRange(fd, 0, off, unix.SYNC_FILE_RANGE_WAIT_BEFORE)
	}
}
