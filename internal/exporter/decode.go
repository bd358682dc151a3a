package exporter

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Caps on the bodies read from the monitor port. /varz and /healthz are a
// few KiB; /jsz without config is about 1.5 KiB per stream with one
// consumer, so 32 MiB holds some 20,000 streams, more than the series
// bound lets through anyway. The body is read through the cap by one
// streaming decoder, never whole into memory first.
const (
	MaxVarzBody    = 1 << 20
	MaxHealthzBody = 64 << 10
	MaxJSZBody     = 32 << 20
)

// Decode reads one JSON value of at most limit bytes from r into v. A body
// past the limit is an error, not a truncated value.
func Decode(r io.Reader, limit int64, v any) error {
	body := &io.LimitedReader{R: r, N: limit + 1}
	err := json.NewDecoder(body).Decode(v)
	if body.N <= 0 {
		return fmt.Errorf("the answer is larger than %d bytes", limit)
	}
	return err
}

// Varz is what the series need of /varz. Numbers are float64, as
// Prometheus holds them.
type Varz struct {
	ServerName       string    `json:"server_name"`
	Start            time.Time `json:"start"`
	Now              time.Time `json:"now"`
	Connections      float64   `json:"connections"`
	TotalConnections float64   `json:"total_connections"`
	Subscriptions    float64   `json:"subscriptions"`
	SlowConsumers    float64   `json:"slow_consumers"`
	InMsgs           float64   `json:"in_msgs"`
	OutMsgs          float64   `json:"out_msgs"`
	InBytes          float64   `json:"in_bytes"`
	OutBytes         float64   `json:"out_bytes"`
	Mem              float64   `json:"mem"`
	CPU              float64   `json:"cpu"`
	Cores            float64   `json:"cores"`
	GoMaxProcs       float64   `json:"gomaxprocs"`
	Routes           float64   `json:"routes"`
	Remotes          float64   `json:"remotes"`
	Leafnodes        float64   `json:"leafnodes"`
	MaxConnections   float64   `json:"max_connections"`
	MaxPayload       float64   `json:"max_payload"`
	StaleConnections float64   `json:"stale_connections"`
}

// Healthz is /healthz.
type Healthz struct {
	Status string `json:"status"`
}

// JSZ is what the series need of /jsz (JSZPath).
type JSZ struct {
	Disabled bool `json:"disabled"`
	Config   struct {
		MaxMemory  int64  `json:"max_memory"`
		MaxStorage int64  `json:"max_storage"`
		Domain     string `json:"domain"`
	} `json:"config"`
	Memory    uint64    `json:"memory"`
	Storage   uint64    `json:"storage"`
	API       API       `json:"api"`
	Streams   int64     `json:"streams"`
	Consumers int64     `json:"consumers"`
	Messages  uint64    `json:"messages"`
	Bytes     uint64    `json:"bytes"`
	Meta      *Raft     `json:"meta_cluster"`
	Accounts  []Account `json:"account_details"`
}

// API counts JetStream API requests.
type API struct {
	Total  uint64 `json:"total"`
	Errors uint64 `json:"errors"`
}

// Raft is a Raft group as /jsz shows it: its leader and, on the leader,
// how current each follower is.
type Raft struct {
	Name        string    `json:"name"`
	Leader      string    `json:"leader"`
	ClusterSize int       `json:"cluster_size"`
	Replicas    []Replica `json:"replicas"`
}

// Replica is one follower of a Raft group.
type Replica struct {
	Name    string `json:"name"`
	Current bool   `json:"current"`
	Offline bool   `json:"offline"`
	Lag     uint64 `json:"lag"`
}

// Account is one account's JetStream view.
type Account struct {
	Name    string   `json:"name"`
	ID      string   `json:"id"`
	Memory  uint64   `json:"memory"`
	Storage uint64   `json:"storage"`
	API     API      `json:"api"`
	Streams []Stream `json:"stream_detail"`
}

// Stream is one stream this server holds a replica of.
type Stream struct {
	Name    string `json:"name"`
	Cluster *Raft  `json:"cluster"`
	State   struct {
		Messages      uint64 `json:"messages"`
		Bytes         uint64 `json:"bytes"`
		FirstSeq      uint64 `json:"first_seq"`
		LastSeq       uint64 `json:"last_seq"`
		NumSubjects   uint64 `json:"num_subjects"`
		ConsumerCount int64  `json:"consumer_count"`
	} `json:"state"`
	Mirror    *Source    `json:"mirror"`
	Sources   []Source   `json:"sources"`
	Consumers []Consumer `json:"consumer_detail"`
}

// Source is a stream's mirror or one of its sources.
type Source struct {
	Name string `json:"name"`
	Lag  uint64 `json:"lag"`
}

// SequencePair is a consumer's position in its own and the stream's
// sequence.
type SequencePair struct {
	Consumer uint64 `json:"consumer_seq"`
	Stream   uint64 `json:"stream_seq"`
}

// Consumer is one consumer of a stream.
type Consumer struct {
	Name           string       `json:"name"`
	Cluster        *Raft        `json:"cluster"`
	Delivered      SequencePair `json:"delivered"`
	AckFloor       SequencePair `json:"ack_floor"`
	NumAckPending  int64        `json:"num_ack_pending"`
	NumRedelivered int64        `json:"num_redelivered"`
	NumWaiting     int64        `json:"num_waiting"`
	NumPending     uint64       `json:"num_pending"`
}
