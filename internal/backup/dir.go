package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// Dir is a backup's directory on a mounted claim. A backup is written
// beside it, in the same filesystem, and renamed into place once whole:
// a rename is atomic, a copy is not.
type Dir string

func (d Dir) String() string { return string(d) }

func (d Dir) create(context.Context) (draft, error) {
	dir := string(d)
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrExists, dir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	// The claim's first backup makes the folder the backups share.
	if err := os.MkdirAll(filepath.Dir(dir), 0o750); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".partial-")
	if err != nil {
		return nil, err
	}
	return &dirDraft{tmp: tmp, final: dir}, nil
}

// open reads file in d; its version is its size and modification time,
// which a rewrite changes.
func (d Dir) open(_ context.Context, file, version string) (io.ReadCloser, string, error) {
	f, err := os.Open(filepath.Join(string(d), file))
	if err != nil {
		return nil, "", err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, "", err
	}
	got := strconv.FormatInt(fi.Size(), 10) + "@" + strconv.FormatInt(fi.ModTime().UnixNano(), 10)
	if version != "" && version != got {
		f.Close()
		return nil, "", fmt.Errorf("%w: %s", ErrChanged, file)
	}
	return f, got, nil
}

func (d Dir) child(name string) Location { return Dir(filepath.Join(string(d), name)) }

// gone says whether d holds nothing; anything there but a directory (a
// link to one, say) is not a backup, and is refused.
func (d Dir) gone(context.Context) (bool, error) {
	fi, err := os.Lstat(string(d))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return true, nil
	case err != nil:
		return false, err
	case !fi.IsDir():
		return false, fmt.Errorf("%w: %s is not a directory", ErrNotABackup, d)
	}
	return false, nil
}

// removeFinished removes d whole: RemoveAll removes links inside it,
// never what they point to.
func (d Dir) removeFinished(ctx context.Context) error {
	if gone, err := d.gone(ctx); gone || err != nil {
		return err
	}
	return os.RemoveAll(string(d))
}

type dirDraft struct {
	tmp, final string
	open       *os.File
}

func (w *dirDraft) data(_ context.Context, file string, _ int64) (io.WriteCloser, error) {
	f, err := os.OpenFile(filepath.Join(w.tmp, file), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	w.open = f
	return &syncedFile{File: f}, nil
}

func (w *dirDraft) put(_ context.Context, file string, b []byte) error {
	return writeFileSynced(filepath.Join(w.tmp, file), b)
}

func (w *dirDraft) child(name string) Location { return Dir(filepath.Join(w.tmp, name)) }

func (w *dirDraft) commit(context.Context) error {
	if err := os.Rename(w.tmp, w.final); err != nil {
		if _, statErr := os.Lstat(w.final); statErr == nil {
			return fmt.Errorf("%w: %s", ErrExists, w.final)
		}
		return err
	}
	return syncDir(filepath.Dir(w.final))
}

// abort removes the draft; after a commit it is gone already.
func (w *dirDraft) abort() {
	if w.open != nil {
		w.open.Close() // a second Close only fails
	}
	os.RemoveAll(w.tmp)
}

// syncedFile is flushed to the disk before it closes: a backup said to be
// whole must survive the node's crash. It is written back as it is
// written (writeBehind), so that the flush at the end finds little left
// and the dirty pages, which count against the Job's memory limit, stay
// few.
type syncedFile struct {
	*os.File
	written, started int64 // bytes written; bytes whose writeback began
}

// writeBehind is how much of the archive is written before its writeback
// begins.
const writeBehind = 8 << 20

func (f *syncedFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.written += int64(n)
	if f.written-f.started >= writeBehind {
		writeBack(f.File, f.started, f.written-f.started)
		f.started = f.written
	}
	return n, err
}

func (f *syncedFile) Close() error {
	if err := f.Sync(); err != nil {
		f.File.Close()
		return err
	}
	return f.File.Close()
}

func writeFileSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return (&syncedFile{File: f}).Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
