package backupreport

import (
	"time"
)

// Manifest is what a backup holds and how it was taken: what a Backup's
// status reports.
type Manifest struct {
	// Stream is the stream's name.
	Stream string `json:"stream"`
	// FirstSeq and LastSeq bound the sequences it holds; Messages and
	// Bytes count them, as the stream's state said when the snapshot began.
	FirstSeq uint64 `json:"firstSeq"`
	LastSeq  uint64 `json:"lastSeq"`
	Messages uint64 `json:"messages"`
	Bytes    uint64 `json:"bytes"`
	// Consumers is how many consumers' state it holds.
	Consumers int `json:"consumers"`
	// DataFile is the archive's name in the backup's directory, and
	// DataSize its size as stored.
	DataFile string `json:"dataFile"`
	DataSize int64  `json:"dataSize"`
	// SHA256 is the archive's checksum, hex.
	SHA256 string `json:"sha256"`
	// Started and Finished bound the time it took.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
}

// SetManifest is what a backup of every stream of a NATS system holds, in
// sum: each stream's backup is a backup of its own, in a directory (or
// under a key) named by the stream, beside the set's list of them.
type SetManifest struct {
	// Streams counts the streams backed up.
	Streams   int    `json:"streams"`
	Messages  uint64 `json:"messages"`
	Bytes     uint64 `json:"bytes"`
	Consumers int    `json:"consumers"`
	// DataSize sums the archives' sizes.
	DataSize int64     `json:"dataSize"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
}
