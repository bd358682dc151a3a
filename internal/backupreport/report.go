// Package backupreport is what a backup's or a restore's Job tells the
// operator: the manifest of the backup it took, the stream it restored,
// or why it did neither. The Job writes it
// as its container's termination message; the operator reads it from the
// pod's status. The operator does not link the data path (internal/backup
// links nats-server), so what both read lives here.
package backupreport

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Reasons a backup failed, as a Backup's Ready condition says them.
const (
	ReasonExists        = "BackupExists"      // the target directory is there already
	ReasonStalled       = "ServerStalled"     // the server stopped sending
	ReasonServerRefused = "ServerRefused"     // an API error: no such stream, no permission
	ReasonUnreachable   = "ServerUnreachable" // no connection
	ReasonOutOfSpace    = "OutOfSpace"        // the claim is full
	ReasonFailed        = "BackupFailed"      // anything else
	// A restore's own.
	ReasonStreamExists = "StreamExists"     // the server has a stream of that name: never overwritten
	ReasonChecksum     = "ChecksumMismatch" // the archive is not what the backup's manifest says
	ReasonNotABackup   = "NotABackup"       // the directory holds no finished backup
	ReasonOtherStream  = "OtherStream"      // the backup holds another stream than the one asked for

	ReasonStoreRefused     = "StoreRefused"     // the object store answered no: no such bucket, access denied
	ReasonStoreUnreachable = "StoreUnreachable" // no answer from the object store, or not over trusted TLS
)

var reasons = []string{ReasonExists, ReasonStalled, ReasonServerRefused, ReasonUnreachable, ReasonOutOfSpace, ReasonFailed,
	ReasonStreamExists, ReasonChecksum, ReasonNotABackup, ReasonOtherStream, ReasonStoreRefused, ReasonStoreUnreachable}

// MaxSize is the most a termination message holds: the kubelet keeps
// 4096 bytes of it.
const MaxSize = 4096

// maxMessage bounds a failure's message, which quotes a server.
const maxMessage = 1024

// Report is one Job run's outcome: a Manifest (a backup taken), a
// Restored (a stream restored), Removed (a backup deleted), or a Reason
// and Message.
type Report struct {
	Manifest *Manifest `json:"manifest,omitempty"`
	// Set is a backup of every stream of a system, in sum.
	Set      *SetManifest `json:"set,omitempty"`
	Restored *Restored    `json:"restored,omitempty"`
	// Removed is the directory a retention's removal deleted.
	Removed string `json:"removed,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Restored is the stream a restore made, as the server reported it.
type Restored struct {
	Stream   string `json:"stream"`
	Messages uint64 `json:"messages"`
	FirstSeq uint64 `json:"firstSeq"`
	LastSeq  uint64 `json:"lastSeq"`
}

// Failure is the report of a failed run, its message cut to a size the
// termination message keeps whole.
func Failure(reason string, err error) Report {
	msg := err.Error()
	if len(msg) > maxMessage {
		msg = strings.ToValidUTF8(msg[:maxMessage], "") + "…"
	}
	return Report{Reason: reason, Message: msg}
}

// Encode is r as one line of JSON.
func Encode(r Report) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxSize {
		return nil, fmt.Errorf("a backup's report of %d bytes is more than a termination message keeps (%d)", len(b), MaxSize)
	}
	return b, nil
}

// Decode reads a termination message. It is the pod's word, so it is
// bounded and checked: a report that is not one of the two shapes, or a
// manifest whose fields could not have come from a snapshot, is an error
// and never reaches a Backup's status.
func Decode(msg string) (Report, error) {
	if len(msg) > MaxSize {
		return Report{}, errors.New("the backup pod's termination message is longer than a kubelet keeps")
	}
	var r Report
	dec := json.NewDecoder(strings.NewReader(msg))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Report{}, fmt.Errorf("the backup pod's termination message is not a report: %w", err)
	}
	outcomes := 0
	for _, said := range []bool{r.Manifest != nil, r.Set != nil, r.Restored != nil, r.Removed != "", r.Reason != "" || r.Message != ""} {
		if said {
			outcomes++
		}
	}
	switch {
	case outcomes > 1:
		return Report{}, errors.New("the backup pod's report says more than one outcome")
	case r.Removed != "":
		return r, nil
	case r.Manifest != nil:
		return r, checkManifest(r.Manifest)
	case r.Set != nil:
		return r, checkSet(r.Set)
	case r.Restored != nil:
		if s := r.Restored.Stream; s == "" || len(s) > 255 || !utf8.ValidString(s) {
			return Report{}, errors.New("the restore's report names no stream")
		}
		return r, nil
	case !knownReason(r.Reason):
		return Report{}, fmt.Errorf("the backup pod's report gives no known reason (%q)", shorten(r.Reason))
	case !utf8.ValidString(r.Message) || len(r.Message) > maxMessage+len("…"):
		return Report{}, errors.New("the backup pod's failure message is not short UTF-8")
	}
	return r, nil
}

func knownReason(s string) bool {
	for _, r := range reasons {
		if s == r {
			return true
		}
	}
	return false
}

// checkManifest: what a snapshot could have produced.
func checkManifest(m *Manifest) error {
	if sum, err := hex.DecodeString(m.SHA256); err != nil || len(sum) != 32 {
		return errors.New("the backup's manifest has no SHA-256")
	}
	switch {
	case m.Stream == "" || len(m.Stream) > 255 || !utf8.ValidString(m.Stream):
		return errors.New("the backup's manifest names no stream")
	case m.DataFile != "stream.tar.s2" && m.DataFile != "stream.arc.s2":
		return fmt.Errorf("the backup's manifest names an unknown data file %q", shorten(m.DataFile))
	case m.DataSize < 0 || m.Consumers < 0:
		return errors.New("the backup's manifest counts below zero")
	case m.Messages > 0 && (m.FirstSeq == 0 || m.LastSeq < m.FirstSeq):
		return errors.New("the backup's manifest has sequences out of order")
	case m.Started.IsZero() || m.Finished.Before(m.Started):
		return errors.New("the backup's manifest ends before it began")
	}
	return nil
}

// checkSet: what a set of snapshots could have produced.
func checkSet(m *SetManifest) error {
	switch {
	case m.Streams < 0 || m.Consumers < 0 || m.DataSize < 0:
		return errors.New("the set's manifest counts below zero")
	case m.Streams == 0 && (m.Messages > 0 || m.DataSize > 0):
		return errors.New("the set's manifest holds data of no stream")
	case m.Started.IsZero() || m.Finished.Before(m.Started):
		return errors.New("the set's manifest ends before it began")
	}
	return nil
}

func shorten(s string) string {
	if len(s) > 64 {
		return strings.ToValidUTF8(s[:64], "") + "…"
	}
	return s
}
