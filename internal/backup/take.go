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
	"time"

	"github.com/nats-io/jsm.go"
	"github.com/nats-io/jsm.go/api"
	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/internal/backupreport"
)

// Errors a caller tells apart (a Backup's condition reason).
var (
	// ErrExists: the place a backup was to go holds something already;
	// nothing is overwritten.
	ErrExists = errors.New("backup: the target exists already")
	// ErrStalled: the server sent nothing for StallTimeout.
	ErrStalled = errors.New("backup: the server stopped sending")
)

// StallTimeout is how long a snapshot may go without a byte arriving
// before it is given up: the server itself gives up on a client that has
// not acknowledged for 5 s, so a longer silence is a lost server.
const StallTimeout = 30 * time.Second

// snapshotWindow is how much the server sends before it waits for the
// client's go-ahead, and so how many bytes of the archive wait in memory
// while the claim or the store takes the ones before (jsm.go answers the
// server as a chunk's turn comes, and sets no limit of its own). The
// server's default is 8 MiB; the backup pod's 64Mi holds this, the
// upload's part (MinPartSize) and the collector's slack. (8 MiB: a
// 1 GiB backup to a claim 12 % faster, a 96 MiB one to a store at 58 MiB
// RSS instead of 45.)
const snapshotWindow = 2 << 20

// snapshotChunk is the size of the messages the server sends the
// archive in: fewer, larger ones cost both sides less per byte, and the
// window still holds eight of them.
const snapshotChunk = 256 << 10

// apiTimeout bounds each JetStream API request of a backup (a restore's
// are bounded by restoreTimeout), not the data's transfer.
const apiTimeout = 10 * time.Second

// metaLimit bounds backup.json, read back from the server's reply here
// and from a backup's directory on restore: a stream's configuration and
// state are a few KiB; a hostile file is not read whole.
const metaLimit = 1 << 20

// Options are a backup's choices.
type Options struct {
	// CheckMessages has the server check every message's checksum as it
	// snapshots (natscli's --check): slower, and a damaged store fails
	// the backup instead of being copied.
	CheckMessages bool
	// Progress, when set, is told the archive's bytes written so far,
	// about once a second and at the end.
	Progress func(backupreport.Progress)
	// MaxBytesPerSecond, above 0, paces the archive's writes to that
	// rate on average: the snapshot's flow control holds the server
	// back, sparing its disks and the network.
	MaxBytesPerSecond int64
}

// Take backs up the stream named stream, reached through nc, with its
// consumers' state, to l, which must hold nothing yet. It returns what the
// backup holds. l holds a backup only once it is whole.
func Take(ctx context.Context, nc *nats.Conn, stream string, l Location, o Options) (Manifest, error) {
	mgr, err := jsm.New(nc, jsm.WithTimeout(apiTimeout))
	if err != nil {
		return Manifest{}, err
	}
	str, err := mgr.LoadStream(stream)
	if err != nil {
		return Manifest{}, fmt.Errorf("backup: stream %q: %w", stream, err)
	}
	state, err := str.LatestState()
	if err != nil {
		return Manifest{}, fmt.Errorf("backup: stream %q: %w", stream, err)
	}
	d, err := l.create(ctx)
	if err != nil {
		return Manifest{}, err
	}
	committed := false
	defer func() {
		if !committed {
			d.abort()
		}
	}()

	m := Manifest{Stream: stream, DataFile: dataFileFor(nc.ConnectedServerVersion()), Started: time.Now()}
	data, err := d.data(ctx, m.DataFile, int64(min(state.Bytes, 1<<62)))
	if err != nil {
		return Manifest{}, err
	}
	snapCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sum := sha256.New()
	counted := &countingWriter{w: paced(snapCtx, io.MultiWriter(data, sum), o.MaxBytesPerSecond)}
	meta := &limitedBuffer{limit: metaLimit}
	stopWatch := watchProgress(snapCtx, cancel, &counted.n, func(n int64) {
		if o.Progress != nil {
			o.Progress(backupreport.Progress{Stream: stream, Done: n, Total: int64(min(state.Bytes, 1<<62))})
		}
	})
	opts := []jsm.SnapshotOption{jsm.SnapshotConsumers(), jsm.SnapshotWindowSize(snapshotWindow), jsm.SnapshotChunkSize(snapshotChunk)}
	if o.CheckMessages {
		opts = append(opts, jsm.SnapshotHealthCheck())
	}
	// jsm closes both writers whatever happens; the archive is closed
	// here once the snapshot is whole, as closing it stores it (a failed
	// one is dropped by the draft's abort).
	_, err = str.SnapshotToBuffer(snapCtx, nopCloser{counted}, meta, opts...)
	stopWatch()
	if err != nil {
		if cause := context.Cause(snapCtx); cause != nil && ctx.Err() == nil {
			err = cause
		}
		return Manifest{}, fmt.Errorf("backup of stream %q: %w", stream, err)
	}
	if err := data.Close(); err != nil {
		return Manifest{}, err
	}
	if err := meta.err(); err != nil {
		return Manifest{}, err
	}
	var req api.JSApiStreamRestoreRequest
	if err := json.Unmarshal(meta.Bytes(), &req); err != nil {
		return Manifest{}, fmt.Errorf("backup of stream %q: the server's configuration and state: %w", stream, err)
	}
	m.FirstSeq, m.LastSeq = req.State.FirstSeq, req.State.LastSeq
	m.Messages, m.Bytes, m.Consumers = req.State.Msgs, req.State.Bytes, req.State.Consumers
	m.DataSize, m.SHA256 = counted.n.Load(), hex.EncodeToString(sum.Sum(nil))
	m.Finished = time.Now()
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Manifest{}, err
	}
	// The manifest before backup.json: a place is a backup once it has
	// backup.json (placeFiles).
	if err := d.put(ctx, ManifestFile, manifest); err != nil {
		return Manifest{}, err
	}
	if err := d.put(ctx, jsm.SnapshotMetaFile, meta.Bytes()); err != nil {
		return Manifest{}, err
	}
	if err := d.commit(ctx); err != nil {
		return Manifest{}, err
	}
	committed = true
	return m, nil
}

// dataFileFor is the archive's name for a server of version v: servers
// from 2.15 send the NATS archive format, older ones a tar, and natscli
// names the file by which (jsm.go's rule).
func dataFileFor(v string) string {
	var major, minor int
	if _, err := fmt.Sscanf(v, "%d.%d", &major, &minor); err == nil && (major > 2 || major == 2 && minor >= 15) {
		return jsm.SnapshotDataFile
	}
	return jsm.SnapshotLegacyDataFile
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// limitedBuffer keeps what is written up to limit bytes and remembers
// that more came.
type limitedBuffer struct {
	bytes.Buffer
	limit int
	over  bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.limit {
		b.over = true
		return 0, fmt.Errorf("backup: backup.json over %d bytes", b.limit)
	}
	return b.Buffer.Write(p)
}

func (b *limitedBuffer) Close() error { return nil }

func (b *limitedBuffer) err() error {
	if b.over {
		return fmt.Errorf("backup: backup.json over %d bytes", b.limit)
	}
	return nil
}
