package natsmon

import (
	"context"
	"fmt"
	"net/http"
	"sort"
)

// maxRoutezBody caps /routez: a route is a few hundred bytes, and a server
// has a handful per peer (route pooling).
const maxRoutezBody = 4 << 20

// FetchRoutePeers reads, from one server's /routez at url, the names of
// the servers it has a route to.
func FetchRoutePeers(ctx context.Context, c *http.Client, url string) ([]string, error) {
	var routez struct {
		Routes []struct {
			RemoteName string `json:"remote_name"`
		} `json:"routes"`
	}
	if err := getJSON(ctx, c, url, maxRoutezBody, &routez); err != nil {
		return nil, err
	}
	peers := make([]string, 0, len(routez.Routes))
	for _, r := range routez.Routes {
		peers = append(peers, r.RemoteName)
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
