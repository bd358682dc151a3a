package backup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nats-io/jsm.go"
	"github.com/nats-io/jsm.go/api"
	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/internal/backupreport"
)

// restoreTimeout bounds each request of a restore: the request that
// starts it and each chunk's. They are not idempotent: a restore request
// the client gave up on goes on in the server (in a cluster its stream is
// proposed at once), and the Job's next try then finds the stream there
// and refuses it for good. A slow server (a meta leader behind, a busy
// node) is waited for instead; the server itself abandons a restore whose
// client went quiet.
const restoreTimeout = 2 * time.Minute

// restoreChunk is how much of the archive each of a restore's requests
// carries (jsm.go sends no more than the server's max_payload). Each
// waits for the server's answer, so the restore's time is their count
// times a round trip: jsm.go's and natscli's 64 KiB make 16,384 of them
// per GiB.
const restoreChunk = 1 << 20

// Errors a restore's caller tells apart.
var (
	// ErrStreamExists: the stream a backup would create is there already;
	// a restore never overwrites one.
	ErrStreamExists = errors.New("restore: the stream exists already")
	// ErrNotABackup: the directory holds no finished backup.
	ErrNotABackup = errors.New("restore: not a finished backup")
	// ErrChecksum: the archive is not the one kubenats' manifest describes.
	ErrChecksum = errors.New("restore: the archive does not match its checksum")
	// ErrOtherStream: the backup holds another stream than the one asked
	// for (RestoreOptions.Stream).
	ErrOtherStream = errors.New("restore: the backup holds another stream")
)

// RestoreOptions are a restore's choices.
type RestoreOptions struct {
	// Replicas, when not 0, replaces the backed-up stream's replica count:
	// a backup of an R3 stream restores into a one-server cluster.
	Replicas int
	// Stream, when set, is the stream the backup must hold: a restore
	// that a Stream resource asked for makes that stream or none.
	Stream string
	// Progress, when set, is told the archive's bytes sent to the server
	// so far, about once a second and at the end.
	Progress func(backupreport.Progress)
	// MaxBytesPerSecond, above 0, paces the archive's sending to that
	// rate on average, sparing the servers' disks and the network.
	MaxBytesPerSecond int64
}

// Read is what a backup says of itself: the stream's configuration and
// state as backed up, and kubenats' manifest when it took it (nil for a
// backup natscli took).
func Read(ctx context.Context, l Location) (api.JSApiStreamRestoreRequest, *Manifest, error) {
	var req api.JSApiStreamRestoreRequest
	meta, err := readSmall(ctx, l, jsm.SnapshotMetaFile)
	if errors.Is(err, os.ErrNotExist) || err == nil && len(meta) == 0 {
		return req, nil, fmt.Errorf("%w: %s has no %s", ErrNotABackup, l, jsm.SnapshotMetaFile)
	}
	if err != nil {
		return req, nil, err
	}
	if err := json.Unmarshal(meta, &req); err != nil {
		return req, nil, fmt.Errorf("%w: %s: %v", ErrNotABackup, jsm.SnapshotMetaFile, err)
	}
	raw, err := readSmall(ctx, l, ManifestFile)
	if errors.Is(err, os.ErrNotExist) {
		return req, nil, nil
	}
	if err != nil {
		return req, nil, err
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return req, nil, fmt.Errorf("%w: %s: %v", ErrNotABackup, ManifestFile, err)
	}
	if m.Stream != req.Config.Name {
		return req, nil, fmt.Errorf("%w: the manifest is of stream %q, %s of %q", ErrNotABackup, m.Stream, jsm.SnapshotMetaFile, req.Config.Name)
	}
	return req, &m, nil
}

// Restore creates, through nc, the stream backed up at l, with its
// messages under their sequence numbers and its consumers at their ack
// floors. It refuses when a stream of that name exists, and, for a
// backup kubenats took, when the archive is not the one it wrote.
func Restore(ctx context.Context, nc *nats.Conn, l Location, o RestoreOptions) (*api.StreamState, error) {
	req, m, err := Read(ctx, l)
	if err != nil {
		return nil, err
	}
	name := req.Config.Name
	if o.Stream != "" && o.Stream != name {
		return nil, fmt.Errorf("%w: %q, not %q", ErrOtherStream, name, o.Stream)
	}
	version := ""
	if m != nil {
		if version, err = verify(ctx, l, m); err != nil {
			return nil, err
		}
	}
	mgr, err := jsm.New(nc, jsm.WithTimeout(restoreTimeout))
	if err != nil {
		return nil, err
	}
	if o.Replicas > 0 {
		req.Config.Replicas = o.Replicas
	}
	meta, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	// The archive read a second time must be the one just checked.
	data, _, _, err := openData(ctx, l, version)
	if err != nil {
		return nil, err
	}
	defer data.Close()
	sent := &countingReader{r: pacedReading(ctx, fullChunks{data}, o.MaxBytesPerSecond)}
	stopReporting := watchProgress(ctx, nil, &sent.n, func(n int64) {
		if o.Progress != nil {
			o.Progress(backupreport.Progress{Stream: name, Done: n, Total: archiveSize(m)})
		}
	})
	// The server refuses a name in use (10130) before it takes a byte: one
	// check, with no window between it and the restore.
	state, err := mgr.RestoreSnapshotFromBuffer(ctx, name, io.NopCloser(sent), io.NopCloser(bytes.NewReader(meta)), jsm.SnapshotChunkSize(restoreChunk))
	stopReporting()
	if err != nil {
		if isStreamNameInUse(err) {
			return nil, fmt.Errorf("%w: %s", ErrStreamExists, name)
		}
		return nil, fmt.Errorf("restore of stream %q: %w", name, err)
	}
	return state, nil
}

// verify reads l's archive whole and compares it with m; it returns the
// version it read.
func verify(ctx context.Context, l Location, m *Manifest) (string, error) {
	f, file, version, err := openData(ctx, l, "")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sum := sha256.New()
	n, err := io.Copy(sum, f)
	if err != nil {
		return "", err
	}
	if got := hex.EncodeToString(sum.Sum(nil)); n != m.DataSize || got != m.SHA256 {
		return "", fmt.Errorf("%w: %s is %d bytes with sha256 %s, the manifest says %d bytes with %s", ErrChecksum,
			file, n, got, m.DataSize, m.SHA256)
	}
	return version, nil
}

// streamNameInUseForRestore is the server's code for a restore of a
// stream whose name is taken (JSStreamNameExistRestoreFailedErr).
const streamNameInUseForRestore = 10130

func isStreamNameInUse(err error) bool {
	return jsm.IsNatsError(err, streamNameInUseForRestore)
}

// fullChunks fills each read whole unless the archive ends first, and
// returns io.EOF only with no bytes: jsm.go's restore sends each read as
// one request, so an object store's body, which reads a few KiB at a
// time, would otherwise cost a round trip per few KiB; and it stops at
// the first io.EOF, dropping bytes read with it (which a body does).
type fullChunks struct{ r io.Reader }

func (f fullChunks) Read(p []byte) (int, error) {
	n, err := io.ReadFull(f.r, p)
	if n > 0 && errors.Is(err, io.ErrUnexpectedEOF) {
		return n, nil // the last chunk; the next read says io.EOF
	}
	return n, err
}

// archiveSize is the archive's size as kubenats' manifest gives it; 0
// (unknown) for a backup natscli took.
func archiveSize(m *Manifest) int64 {
	if m == nil {
		return 0
	}
	return m.DataSize
}
