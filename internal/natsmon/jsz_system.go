package natsmon

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
)

// pingJSZ asks every server of the cluster for its JetStream view. Only the
// system account receives it, so the answers come from the servers
// themselves, whoever they are, not from a list the caller believes in.
const pingJSZ = "$SYS.REQ.SERVER.PING.JSZ"

// pingJSZRequest is JSZQuery as a ping's options (nats-server's
// JSzOptions, in its JSON names).
const pingJSZRequest = `{"accounts":true,"streams":true,"consumer":true,"config":true,"raft":true}`

// maxPingPending bounds the answers to one ping held at once, in bytes:
// every server answers at the same moment, and a server the operator
// does not run may answer with the largest message the protocol guard
// allows. Answers past it are dropped by nats.go (the subscription is a
// slow consumer) and count as no answer; the bytes are reserved from the
// process-wide budget (inflight.go) for as long as the ping runs. 32 MiB
// holds the answers of a 99-server cluster as they come (a real view is
// a few KiB to a few MiB, decoded as soon as it arrives).
const maxPingPending = 32 << 20

// FetchJSZFromSystem collects each server's /jsz view through the system
// account connection nc: expected answers, or whatever came within wait.
// A server that did not answer is missing from the map; callers compare
// against the servers they expect. An answer past the view limits
// (jsz_decode.go) counts as no answer.
func FetchJSZFromSystem(ctx context.Context, nc *nats.Conn, expected int, wait time.Duration) (map[string]*JSInfo, error) {
	release, err := Reserve(ctx, maxPingPending)
	if err != nil {
		return nil, err
	}
	defer release()
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return nil, err
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := sub.SetPendingLimits(2*expected+1, maxPingPending); err != nil {
		return nil, err
	}
	if err := nc.PublishRequest(pingJSZ, inbox, []byte(pingJSZRequest)); err != nil {
		return nil, err
	}
	views := map[string]*JSInfo{}
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for len(views) < expected {
		m, err := sub.NextMsgWithContext(waitCtx)
		switch {
		case errors.Is(err, nats.ErrSlowConsumer):
			continue // answers were dropped; the rest still count
		case err != nil && ctx.Err() != nil:
			return views, ctx.Err()
		case err != nil:
			return views, nil // wait is over
		}
		if name, view, err := DecodeSystemJSZ(m.Data); err == nil && name != "" && view != nil {
			views[name] = view
		}
	}
	return views, nil
}

// DecodeSystemJSZ reads one server's answer to pingJSZ: the server's name
// ("server"."name") and its view ("data"), nil when it sent none.
func DecodeSystemJSZ(data []byte) (server string, view *JSInfo, err error) {
	d := newJSONReader(bytes.NewReader(data), "JetStream ping answer")
	b := &jszBudget{}
	err = d.Object(func(key []byte) error {
		switch string(key) {
		case "server":
			return d.Object(func(key []byte) error {
				if string(key) != "name" {
					return d.Skip()
				}
				var err error
				server, err = d.String("server name")
				return err
			})
		case "data":
			if isNull, err := d.Null(); isNull || err != nil {
				return err
			}
			var err error
			view, err = d.jsInfo(b)
			return err
		}
		return d.Skip()
	})
	if err == nil {
		err = d.End()
	}
	if err != nil {
		return "", nil, err
	}
	return server, view, nil
}
