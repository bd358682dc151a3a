package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/nats-io/jsm.go"
	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/internal/backupreport"
)

// A set is a backup of every stream of a NATS system (as the credentials
// see it: one account): one backup per stream, in a place named by the
// stream inside the set's, and SetFile listing them. SetFile is written
// last, so a set is whole or no set.
const SetFile = "kubenats-set.json"

// SetManifest is what a set holds, in sum.
type SetManifest = backupreport.SetManifest

// MaxSetStreams bounds a set, and so its list (setLimit).
const MaxSetStreams = 10000

// setLimit bounds SetFile as read back: a manifest per stream.
const setLimit = 8 << 20

// setDoc is SetFile: the sum, and each stream's manifest.
type setDoc struct {
	SetManifest
	Backups []Manifest `json:"backups"`
}

// TakeAll backs up every stream nc's user sees to l, which must hold
// nothing yet: each as Take would, one after the other. A stream deleted
// after the listing is left out; any other failure fails the set, and
// what it wrote goes.
func TakeAll(ctx context.Context, nc *nats.Conn, l Location, o Options) (SetManifest, error) {
	mgr, err := jsm.New(nc, jsm.WithTimeout(apiTimeout))
	if err != nil {
		return SetManifest{}, err
	}
	names, err := mgr.StreamNames(nil)
	if err != nil {
		return SetManifest{}, fmt.Errorf("backup: listing the streams: %w", err)
	}
	if len(names) > MaxSetStreams {
		return SetManifest{}, fmt.Errorf("backup: %d streams, more than a set holds (%d): back them up by name", len(names), MaxSetStreams)
	}
	for _, name := range names {
		// A name is a directory or a key here: one from a server that
		// could climb out of the set's place is refused.
		if !jsm.IsValidName(name) || len(name) > 255 {
			return SetManifest{}, fmt.Errorf("backup: the server lists a stream named %.64q, which no server makes", name)
		}
	}
	slices.Sort(names)
	d, err := l.create(ctx)
	if err != nil {
		return SetManifest{}, err
	}
	committed := false
	defer func() {
		if !committed {
			d.abort()
		}
	}()
	doc := setDoc{SetManifest: SetManifest{Started: time.Now()}, Backups: []Manifest{}}
	for _, name := range names {
		m, err := Take(ctx, nc, name, d.child(name), o)
		if isStreamNotFound(err) {
			continue // deleted since the listing: nothing to keep
		}
		if err != nil {
			return SetManifest{}, err
		}
		doc.Backups = append(doc.Backups, m)
		doc.Streams++
		doc.Messages, doc.Bytes, doc.Consumers, doc.DataSize = doc.Messages+m.Messages, doc.Bytes+m.Bytes, doc.Consumers+m.Consumers, doc.DataSize+m.DataSize
	}
	doc.Finished = time.Now()
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return SetManifest{}, err
	}
	if err := d.put(ctx, SetFile, b); err != nil {
		return SetManifest{}, err
	}
	if err := d.commit(ctx); err != nil {
		return SetManifest{}, err
	}
	committed = true
	return doc.SetManifest, nil
}

// ReadSet is what the set at l says of itself, or ErrNotABackup when l
// holds no finished set.
func ReadSet(ctx context.Context, l Location) (SetManifest, []Manifest, error) {
	b, err := readBounded(ctx, l, SetFile, setLimit)
	if errors.Is(err, os.ErrNotExist) {
		return SetManifest{}, nil, fmt.Errorf("%w: %s has no %s", ErrNotABackup, l, SetFile)
	}
	if err != nil {
		return SetManifest{}, nil, err
	}
	var doc setDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return SetManifest{}, nil, fmt.Errorf("%w: %s: %v", ErrNotABackup, SetFile, err)
	}
	if len(doc.Backups) != doc.Streams || doc.Streams > MaxSetStreams {
		return SetManifest{}, nil, fmt.Errorf("%w: %s lists %d backups of %d streams", ErrNotABackup, SetFile, len(doc.Backups), doc.Streams)
	}
	for _, m := range doc.Backups {
		if !jsm.IsValidName(m.Stream) {
			return SetManifest{}, nil, fmt.Errorf("%w: %s lists a stream named %.64q", ErrNotABackup, SetFile, m.Stream)
		}
	}
	return doc.SetManifest, doc.Backups, nil
}

// streamNotFound is the server's code for a stream that is not there.
const streamNotFound = 10059

func isStreamNotFound(err error) bool { return err != nil && jsm.IsNatsError(err, streamNotFound) }
