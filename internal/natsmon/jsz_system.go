package natsmon

import (
	"context"
	"encoding/json"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// pingJSZ asks every server of the cluster for its JetStream view. Only the
// system account receives it, so the answers come from the servers
// themselves, whoever they are, not from a list the caller believes in.
const pingJSZ = "$SYS.REQ.SERVER.PING.JSZ"

// FetchJSZFromSystem collects each server's /jsz view through the system
// account connection nc: expected answers, or whatever came within wait.
// A server that did not answer is missing from the map; callers compare
// against the servers they expect.
func FetchJSZFromSystem(ctx context.Context, nc *nats.Conn, expected int, wait time.Duration) (map[string]*server.JSInfo, error) {
	inbox := nats.NewInbox()
	replies := make(chan *nats.Msg, expected*2)
	sub, err := nc.ChanSubscribe(inbox, replies)
	if err != nil {
		return nil, err
	}
	defer func() { _ = sub.Unsubscribe() }()
	req, _ := json.Marshal(server.JSzOptions{Accounts: true, Streams: true, Consumer: true, Config: true, RaftGroups: true})
	if err := nc.PublishRequest(pingJSZ, inbox, req); err != nil {
		return nil, err
	}
	views := map[string]*server.JSInfo{}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for len(views) < expected {
		select {
		case m := <-replies:
			var resp struct {
				Server *server.ServerInfo `json:"server"`
				Data   *server.JSInfo     `json:"data"`
			}
			if json.Unmarshal(m.Data, &resp) == nil && resp.Server != nil && resp.Data != nil {
				views[resp.Server.Name] = resp.Data
			}
		case <-timer.C:
			return views, nil
		case <-ctx.Done():
			return views, ctx.Err()
		}
	}
	return views, nil
}
