package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/minio/minio-go/v7"
)

// MinPartSize is the size of each part an archive is uploaded in, and so
// the one buffer an upload holds, for streams up to about 75 GiB: the
// backup pod's memory bound (64Mi) holds it with room to spare. An object
// has at most 10,000 parts, so a larger stream's parts are larger
// (partSize), and its Job needs the memory for one.
const MinPartSize = 8 << 20

// maxParts is the most parts an S3 object has.
const maxParts = 10000

// partSize is the part for an archive of about sizeHint bytes: the
// least that fits it in maxParts with a tenth to spare (an archive may be
// larger than the stream's bytes), in whole MiB.
func partSize(sizeHint int64) uint64 {
	need := sizeHint/maxParts + sizeHint/maxParts/10
	need = (need + 1<<20 - 1) &^ (1<<20 - 1)
	return uint64(max(need, MinPartSize))
}

// cleanupTimeout bounds the removal of a failed upload's objects, which
// runs after the backup's own context may have ended.
const cleanupTimeout = 30 * time.Second

// Object is a backup under a key prefix of a bucket: its files are the
// objects <Key>/stream.arc.s2 and so on. An object store has no rename,
// so the order of the writes makes a backup whole or absent: backup.json
// is written last, and a place without it is not a backup.
type Object struct {
	Client *minio.Client
	Bucket string
	// Key is the backup's prefix, without a trailing slash.
	Key string
}

func (o Object) String() string { return "s3://" + o.Bucket + "/" + o.Key }

func (o Object) name(file string) string { return o.Key + "/" + file }

func (o Object) child(name string) Location {
	return Object{Client: o.Client, Bucket: o.Bucket, Key: o.Key + "/" + name}
}

// create refuses when any of a backup's objects is there. The check and
// the writes are not one step, as an object store has no such thing; the
// place is a Backup's own (one per name and namespace), so only a second
// store user writing the same keys races it.
func (o Object) create(ctx context.Context) (draft, error) {
	gone, err := o.gone(ctx)
	if err != nil {
		return nil, err
	}
	if !gone {
		return nil, fmt.Errorf("%w: %s", ErrExists, o)
	}
	return &objectDraft{o: o}, nil
}

// gone stats each of a backup's objects: a HEAD each, whose reply has no
// body to bound (a listing's reply is as long as the store makes it).
func (o Object) gone(ctx context.Context) (bool, error) {
	for _, file := range placeFiles {
		_, err := o.Client.StatObject(ctx, o.Bucket, o.name(file), minio.StatObjectOptions{})
		if err == nil {
			return false, nil
		}
		if !isNoSuchKey(err) {
			return false, storeError(o, err)
		}
	}
	return true, nil
}

// open reads an object; its version is the store's ETag, and a version
// asked for is a condition of the read, which the store checks.
func (o Object) open(ctx context.Context, file, version string) (io.ReadCloser, string, error) {
	var opts minio.GetObjectOptions
	if version != "" {
		if err := opts.SetMatchETag(version); err != nil {
			return nil, "", err
		}
	}
	obj, err := o.Client.GetObject(ctx, o.Bucket, o.name(file), opts)
	if err != nil {
		return nil, "", storeError(o, err)
	}
	info, err := obj.Stat() // GetObject is lazy: this is the request
	switch {
	case isNoSuchKey(err):
		obj.Close()
		return nil, "", fmt.Errorf("%s: %w", o.name(file), os.ErrNotExist)
	case statusOf(err) == http.StatusPreconditionFailed:
		obj.Close()
		return nil, "", fmt.Errorf("%w: %s", ErrChanged, o.name(file))
	case err != nil:
		obj.Close()
		return nil, "", storeError(o, err)
	}
	return obj, info.ETag, nil
}

// removeFinished deletes the backup's objects, backup.json last (a set's
// list after that): a removal cut short leaves a backup that a second
// removal finishes, never an archive nothing names.
func (o Object) removeFinished(ctx context.Context) error {
	for _, file := range placeFiles {
		if err := o.Client.RemoveObject(ctx, o.Bucket, o.name(file), minio.RemoveObjectOptions{}); err != nil && !isNoSuchKey(err) {
			return storeError(o, err)
		}
	}
	return nil
}

type objectDraft struct {
	o        Object
	written  []string
	uploads  []*upload
	children []Location
}

func (w *objectDraft) child(name string) Location {
	c := w.o.child(name)
	w.children = append(w.children, c)
	return c
}

// data uploads what is written as one multipart object, a part at a time:
// the writer blocks while a part is sent, so the server's snapshot waits
// for the store, and memory holds one part.
func (w *objectDraft) data(ctx context.Context, file string, sizeHint int64) (io.WriteCloser, error) {
	pr, pw := io.Pipe()
	u := &upload{pw: pw, done: make(chan struct{})}
	w.written = append(w.written, file)
	w.uploads = append(w.uploads, u)
	go func() {
		defer close(u.done)
		_, err := w.o.Client.PutObject(ctx, w.o.Bucket, w.o.name(file), pr, -1, minio.PutObjectOptions{
			PartSize: partSize(sizeHint), ContentType: "application/octet-stream"})
		u.err = err
		// A failed upload stops the writer at its next write.
		pr.CloseWithError(errors.Join(storeError(w.o, err), io.ErrClosedPipe))
	}()
	return u, nil
}

func (w *objectDraft) put(ctx context.Context, file string, b []byte) error {
	w.written = append(w.written, file)
	_, err := w.o.Client.PutObject(ctx, w.o.Bucket, w.o.name(file), bytes.NewReader(b), int64(len(b)), minio.PutObjectOptions{
		ContentType: "application/json"})
	return storeError(w.o, err)
}

// commit has nothing left to do: backup.json, written last by Take, made
// the backup.
func (w *objectDraft) commit(context.Context) error { return nil }

// abort stops the uploads still open (the client then aborts their
// multipart uploads, so no part of a failed backup stays stored) and
// deletes what the draft wrote.
func (w *objectDraft) abort() {
	for _, u := range w.uploads {
		u.pw.CloseWithError(errAborted)
		<-u.done
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	for _, c := range w.children {
		Remove(ctx, c) // a set's backups taken so far; one cut short removed itself
	}
	for i := len(w.written) - 1; i >= 0; i-- {
		w.o.Client.RemoveObject(ctx, w.o.Bucket, w.o.name(w.written[i]), minio.RemoveObjectOptions{})
	}
}

var errAborted = errors.New("backup: aborted")

// upload is the writing end of one object's upload.
type upload struct {
	pw   *io.PipeWriter
	done chan struct{}
	err  error
}

func (u *upload) Write(p []byte) (int, error) { return u.pw.Write(p) }

// Close ends the object and waits until the store has it.
func (u *upload) Close() error {
	u.pw.Close()
	<-u.done
	return storeError(nil, u.err)
}

func isNoSuchKey(err error) bool {
	var answer minio.ErrorResponse
	return errors.As(err, &answer) && answer.Code == minio.NoSuchKey
}

// ErrStore: the object store refused or could not be reached. Its message
// holds the store's own words, never the credentials.
var ErrStore = errors.New("object store")

func storeError(o interface{ String() string }, err error) error {
	if err == nil || errors.Is(err, ErrStore) {
		return err
	}
	if o == nil {
		return fmt.Errorf("%w: %w", ErrStore, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrStore, o, err)
}

func statusOf(err error) int {
	var answer minio.ErrorResponse
	if errors.As(err, &answer) {
		return answer.StatusCode
	}
	return 0
}
