package exporter

import (
	"fmt"
	"io"
	"time"
)

// Caps on the bodies read from the monitor port. /varz and /healthz are a
// few KiB; /jsz without config is about 1.5 KiB per stream with one
// consumer, so 32 MiB holds some 20,000 streams, more than the series
// bound lets through anyway. The body is read through the cap by the
// bounded streaming reader (read.go), never whole into memory first.
const (
	MaxVarzBody    = 1 << 20
	MaxHealthzBody = 64 << 10
	MaxJSZBody     = 32 << 20
)

// Decode reads one monitor document of at most limit bytes from r into v,
// a *Varz, *Healthz, *JSZ or *AccountLimits. A body past the limit is an error, not a
// truncated value.
func Decode(r io.Reader, limit int64, v any) error {
	body := &io.LimitedReader{R: r, N: limit + 1}
	var err error
	switch v := v.(type) {
	case *Varz:
		*v, err = decodeVarz(body)
	case *Healthz:
		*v, err = decodeHealthz(body)
	case *JSZ:
		*v, err = decodeJSZ(body)
	case *AccountLimits:
		*v, err = decodeAccountz(body)
	default:
		return fmt.Errorf("no monitor document decodes into %T", v)
	}
	if body.N <= 0 {
		return fmt.Errorf("the answer is larger than %d bytes", limit)
	}
	return err
}

// Varz is what the series need of /varz. Numbers are float64, as
// Prometheus holds them.
type Varz struct {
	ServerName       string
	Start            time.Time
	Now              time.Time
	Connections      float64
	TotalConnections float64
	Subscriptions    float64
	SlowConsumers    float64
	InMsgs           float64
	OutMsgs          float64
	InBytes          float64
	OutBytes         float64
	Mem              float64
	CPU              float64
	Cores            float64
	GoMaxProcs       float64
	Routes           float64
	Remotes          float64
	Leafnodes        float64
	MaxConnections   float64
	MaxPayload       float64
	StaleConnections float64
}

// Healthz is /healthz.
type Healthz struct {
	Status string
}

// JSZ is what the series need of /jsz (JSZPath).
type JSZ struct {
	Disabled bool
	Config   struct {
		MaxMemory  int64
		MaxStorage int64
		Domain     string
	}
	Memory    uint64
	Storage   uint64
	API       API
	Streams   int64
	Consumers int64
	Messages  uint64
	Bytes     uint64
	Meta      *Raft
	Accounts  []Account
}

// API counts JetStream API requests.
type API struct {
	Total  uint64
	Errors uint64
}

// Raft is a Raft group as /jsz shows it: its leader and, on the leader,
// how current each follower is.
type Raft struct {
	Name        string
	Leader      string
	ClusterSize int
	Replicas    []Replica
}

// Replica is one follower of a Raft group.
type Replica struct {
	Name    string
	Current bool
	Offline bool
	Lag     uint64
}

// Account is one account's JetStream view.
type Account struct {
	Name    string
	ID      string
	Memory  uint64
	Storage uint64
	API     API
	Streams []Stream
}

// Stream is one stream this server holds a replica of.
type Stream struct {
	Name    string
	Cluster *Raft
	State   struct {
		Messages      uint64
		Bytes         uint64
		FirstSeq      uint64
		LastSeq       uint64
		NumSubjects   uint64
		ConsumerCount int64
	}
	Mirror    *Source
	Sources   []Source
	Consumers []Consumer
}

// Source is a stream's mirror or one of its sources.
type Source struct {
	Name string
	Lag  uint64
}

// SequencePair is a consumer's position in its own and the stream's
// sequence.
type SequencePair struct {
	Consumer uint64
	Stream   uint64
}

// Consumer is one consumer of a stream.
type Consumer struct {
	Name           string
	Cluster        *Raft
	Delivered      SequencePair
	AckFloor       SequencePair
	NumAckPending  int64
	NumRedelivered int64
	NumWaiting     int64
	NumPending     uint64
}
