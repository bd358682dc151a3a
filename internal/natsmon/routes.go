package natsmon

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
)

// maxRoutezBody caps /routez: a route is a few hundred bytes, and a server
// has a handful per peer (route pooling).
const maxRoutezBody = 4 << 20

// maxRoutes bounds the routes one server lists: up to 98 peers (the CRD
// allows 99 servers), each with a pool of routes (3 by default) and a
// route per pinned account.
const maxRoutes = 1024

// FetchRoutePeers reads, from one server's /routez at url, the names of
// the servers it has a route to.
func FetchRoutePeers(ctx context.Context, c *http.Client, url string) ([]string, error) {
	peers := []string{}
	err := getJSON(ctx, c, url, maxRoutezBody, func(r io.Reader) error {
		d := newJSONReader(r, "/routez")
		if err := d.Object(func(key []byte) error {
			if string(key) != "routes" {
				return d.Skip()
			}
			return d.Array(maxRoutes, "routes", func() error {
				return d.Object(func(key []byte) error {
					if string(key) != "remote_name" {
						return d.Skip()
					}
					name, err := d.String("server name")
					peers = append(peers, name)
					return err
				})
			})
		}); err != nil {
			return err
		}
		return d.End()
	})
	if err != nil {
		return nil, err
	}
	return peers, nil
}

// MissingRoute names the first pair of servers without a route between
// them, or returns "" when every server routes to every other one. peers
// maps each server to the servers it has routes to; nil means it did not
// answer. A route is counted from either end: both ends list it once it
// is up, and a server that just lost one may still list it for a moment.
func MissingRoute(peers map[string][]string) string {
	names := make([]string, 0, len(peers))
	for name := range peers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if peers[name] == nil {
			return fmt.Sprintf("server %s did not tell its routes", name)
		}
	}
	has := func(from, to string) bool {
		for _, p := range peers[from] {
			if p == to {
				return true
			}
		}
		return false
	}
	for i, a := range names {
		for _, b := range names[i+1:] {
			if !has(a, b) || !has(b, a) {
				return fmt.Sprintf("servers %s and %s have no route between them", a, b)
			}
		}
	}
	return ""
}
