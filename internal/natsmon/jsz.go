package natsmon

import (
	"context"
	"io"
	"net/http"
)

// JSZQuery asks for every account's streams and consumers with their Raft
// groups: the full picture a settle decision needs.
const JSZQuery = "/jsz?accounts=true&streams=true&consumers=true&raft=true&config=true"

// FetchJSZ reads one server's JetStream view from its monitor port, at url
// (JSZQuery on the server's monitor address).
func FetchJSZ(ctx context.Context, c *http.Client, url string) (*JSInfo, error) {
	var info *JSInfo
	err := getJSON(ctx, c, url, maxJSZBody, func(r io.Reader) error {
		var err error
		info, err = DecodeJSZ(r, "/jsz")
		return err
	})
	if err != nil {
		return nil, err
	}
	return info, nil
}
