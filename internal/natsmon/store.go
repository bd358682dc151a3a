package natsmon

import (
	"context"
	"net/http"
)

// StoreQuery is the plain /jsz: this server's JetStream totals, without
// accounts or streams.
const StoreQuery = "/jsz"

// StoreUse is one server's JetStream file store as it reports it.
type StoreUse struct {
	// Used is the stream data it holds, in bytes: what nats-server counts
	// against Limit (not its Raft logs, nor the filesystem's own).
	Used uint64
	// Limit is its max_file_store; zero or less is none.
	Limit int64
	// JetStreamDisabled: JetStream is off on this server. nats-server
	// turns it off when a write meets a full disk ("no space left on
	// device"), until it is restarted.
	JetStreamDisabled bool
}

// FullMargin is how close to its limit a store counts as full: nats-server
// takes a message as long as the store is not past its limit, whatever the
// message's size, and refuses the next; the stream's replicas, which
// store what their leader took, end up anywhere within one message below
// the limit. 1 MiB is nats-server's default max_payload, the largest
// message a client may send.
const FullMargin = 1 << 20

// Full reports whether the store is at its limit, or within FullMargin of
// it. nats-server refuses every publish to a stream on this server once
// past it ("insufficient resources"), its stream leaders step down, and
// its Raft nodes neither campaign nor follow until there is room.
func (u StoreUse) Full() bool {
	return u.Limit > 0 && u.Used+FullMargin >= uint64(u.Limit)
}

// FetchStoreUse reads one server's file store use from its monitor port, at
// url (StoreQuery on the server's monitor address).
func FetchStoreUse(ctx context.Context, c *http.Client, url string) (StoreUse, error) {
	var jsz struct {
		Disabled bool   `json:"disabled"`
		Storage  uint64 `json:"storage"`
		Config   struct {
			MaxStorage int64 `json:"max_storage"`
		} `json:"config"`
	}
	if err := getJSON(ctx, c, url, maxVarzBody, &jsz); err != nil {
		return StoreUse{}, err
	}
	return StoreUse{Used: jsz.Storage, Limit: jsz.Config.MaxStorage, JetStreamDisabled: jsz.Disabled}, nil
}
