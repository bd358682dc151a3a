package natsmon

import (
	"context"
	"io"
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
	// MetaLeader is the JetStream meta group's leader as this server
	// knows it; "" when it knows none (or runs alone).
	MetaLeader string
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
	var u StoreUse
	err := getJSON(ctx, c, url, maxVarzBody, func(r io.Reader) error {
		d := newJSONReader(r, "/jsz")
		if err := d.Object(func(key []byte) error {
			var err error
			switch string(key) {
			case "disabled":
				u.JetStreamDisabled, err = d.Bool()
			case "storage":
				u.Used, err = d.Uint()
			case "meta_cluster":
				if isNull, nerr := d.Null(); isNull || nerr != nil {
					return nerr
				}
				err = d.Object(func(key []byte) error {
					if string(key) != "leader" {
						return d.Skip()
					}
					var err error
					u.MetaLeader, err = d.String("server name")
					return err
				})
			case "config":
				err = d.Object(func(key []byte) error {
					if string(key) != "max_storage" {
						return d.Skip()
					}
					var err error
					u.Limit, err = d.Int()
					return err
				})
			default:
				err = d.Skip()
			}
			return err
		}); err != nil {
			return err
		}
		return d.End()
	})
	if err != nil {
		return StoreUse{}, err
	}
	return u, nil
}
