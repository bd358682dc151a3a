package natsmon

import (
	"context"
	"net/http"

	"github.com/nats-io/nats-server/v2/server"
)

// JSZQuery asks for every account's streams and consumers with their Raft
// groups: the full picture a settle decision needs.
const JSZQuery = "/jsz?accounts=true&streams=true&consumers=true&raft=true&config=true"

// FetchJSZ reads one server's JetStream view from its monitor port, at url
// (JSZQuery on the server's monitor address).
func FetchJSZ(ctx context.Context, c *http.Client, url string) (*server.JSInfo, error) {
	var info server.JSInfo
	if err := getJSON(ctx, c, url, maxJSZBody, &info); err != nil {
		return nil, err
	}
	return &info, nil
}
