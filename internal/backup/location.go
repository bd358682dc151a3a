package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/nats-io/jsm.go"
)

// A Location is where one backup lives: a directory on a claim (Dir) or a
// key prefix in an S3-compatible bucket (Object). Take, Restore and Remove
// are written once against it; each kind says how a backup appears whole
// or not at all.
type Location interface {
	// String names the place for people and a Backup's status; it holds
	// no credentials.
	String() string
	// create starts a new backup there, refusing with ErrExists when any
	// of a backup's files is there already.
	create(ctx context.Context) (draft, error)
	// open reads one of the backup's files, failing with os.ErrNotExist
	// when it is missing. A version not empty must be the one an earlier
	// open returned, or the read fails with ErrChanged: what was checked
	// is what is restored.
	open(ctx context.Context, file, version string) (_ io.ReadCloser, gotVersion string, _ error)
	// gone says whether none of a backup's (or a set's) files is there.
	gone(ctx context.Context) (bool, error)
	// child is the place of the backup of stream name in a set here.
	child(name string) Location
	// removeFinished deletes the finished backup there (Remove checked
	// that it is one).
	removeFinished(ctx context.Context) error
}

// A draft is a backup being written: it becomes a backup on commit, and
// leaves nothing behind on abort.
type draft interface {
	// data is where the archive named file streams to, about sizeHint
	// bytes (the stream's size); Close returns once it is stored. An
	// abort before Close drops what was written.
	data(ctx context.Context, file string, sizeHint int64) (io.WriteCloser, error)
	// put stores a small file whole.
	put(ctx context.Context, file string, b []byte) error
	// child is where a set's backup of stream name is written: a backup
	// of its own, inside the draft, whole or absent as any.
	child(name string) Location
	commit(ctx context.Context) error
	abort()
}

// ErrChanged: a backup's file changed between the checksum's read and the
// restore's.
var ErrChanged = errors.New("restore: the backup changed while it was read")

// placeFiles are the files a place holds directly, in the order they are
// written: a backup's, of which backup.json, last, makes the place hold a
// backup (natscli writes no manifest), so a backup cut short is never
// taken for one; then a set's list (its backups are in places of their
// own).
var placeFiles = []string{jsm.SnapshotDataFile, jsm.SnapshotLegacyDataFile, ManifestFile, jsm.SnapshotMetaFile, SetFile}

// openData opens the backup's archive in the format its name says:
// stream.arc.s2 from servers 2.15 and later, stream.tar.s2 before.
func openData(ctx context.Context, l Location, version string) (_ io.ReadCloser, file, gotVersion string, _ error) {
	for _, name := range []string{jsm.SnapshotDataFile, jsm.SnapshotLegacyDataFile} {
		r, v, err := l.open(ctx, name, version)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		return r, name, v, err
	}
	return nil, "", "", fmt.Errorf("%w: %s has neither %s nor %s", ErrNotABackup, l, jsm.SnapshotDataFile, jsm.SnapshotLegacyDataFile)
}

// readSmall reads one of l's small files whole when it is within
// metaLimit.
func readSmall(ctx context.Context, l Location, file string) ([]byte, error) {
	return readBounded(ctx, l, file, metaLimit)
}

// readBounded reads one of l's files whole when it is within limit.
func readBounded(ctx context.Context, l Location, file string, limit int) ([]byte, error) {
	r, _, err := l.open(ctx, file, "")
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrNotABackup, file, limit)
	}
	return b, nil
}
