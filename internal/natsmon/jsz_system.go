package natsmon

import (
	"bytes"
	"context"
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

// FetchJSZFromSystem collects each server's /jsz view through the system
// account connection nc: expected answers, or whatever came within wait.
// A server that did not answer is missing from the map; callers compare
// against the servers they expect. An answer past the view limits
// (jsz_decode.go) counts as no answer.
func FetchJSZFromSystem(ctx context.Context, nc *nats.Conn, expected int, wait time.Duration) (map[string]*JSInfo, error) {
	inbox := nats.NewInbox()
	replies := make(chan *nats.Msg, expected*2)
	sub, err := nc.ChanSubscribe(inbox, replies)
	if err != nil {
		return nil, err
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.PublishRequest(pingJSZ, inbox, []byte(pingJSZRequest)); err != nil {
		return nil, err
	}
	views := map[string]*JSInfo{}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for len(views) < expected {
		select {
		case m := <-replies:
			if name, view, err := DecodeSystemJSZ(m.Data); err == nil && name != "" && view != nil {
				views[name] = view
			}
		case <-timer.C:
			return views, nil
		case <-ctx.Done():
			return views, ctx.Err()
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
			if isNull, err := d.null(); isNull || err != nil {
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
