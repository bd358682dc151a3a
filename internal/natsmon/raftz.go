package natsmon

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// A server's /healthz counts a follower current once it has stored what
// its leader sent, and so does the leader (Peer.Current): neither asks
// whether the follower has applied it. A follower resumed after a freeze
// with 300 MiB to take had stored it all 0.1 s after SIGCONT, by both
// views, and applied the first 3 of 1059 entries; it held the stream's
// messages 0.8 to 2.8 s later. Its /raftz says so: its own commit and
// applied indexes for each group.

// RaftzQuery asks a server for the Raft groups of account it is a member
// of, with its own commit and applied indexes; "" asks for the system
// account's (the meta group).
func RaftzQuery(account string) string {
	if account == "" {
		return "/raftz"
	}
	return "/raftz?acc=" + url.QueryEscape(account)
}

// maxRaftzBody caps a /raftz answer: a group is some 600 bytes with its
// peers listed, about a stream's share of /jsz, so the same cap carries as
// many. Nothing of it is kept but the first group found behind.
const maxRaftzBody = maxJSZBody

// RaftGroupIndexes is one group as /raftz reports it: its own indexes.
type RaftGroupIndexes struct {
	Name       string
	Committed  uint64
	Applied    uint64
	CatchingUp bool
}

// FetchApplyBacklog reads one server's /raftz at url (RaftzQuery) and says
// which of its groups has not applied what it committed (ApplyBacklog), ""
// when none. A server with no groups of that account answers 404: nothing
// to wait for.
func FetchApplyBacklog(ctx context.Context, c *http.Client, url string) (string, error) {
	resp, done, err := get(ctx, c, url, maxRaftzBody)
	if err != nil {
		return "", err
	}
	defer done()
	if resp.StatusCode == http.StatusNotFound {
		return "", nil
	}
	var behind string
	err = decodeBody(resp, maxRaftzBody, func(r io.Reader) error {
		var err error
		behind, err = DecodeApplyBacklog(r)
		return err
	})
	return behind, err
}

// DecodeApplyBacklog reads a /raftz answer (an object of accounts, each an
// object of groups by name) and returns ApplyBacklog of the first group
// behind, "" when none is.
func DecodeApplyBacklog(r io.Reader) (string, error) {
	d := newJSONReader(r, "/raftz")
	var behind string
	err := d.Object(func([]byte) error {
		return d.Object(func(key []byte) error {
			if behind != "" {
				return d.Skip()
			}
			g := RaftGroupIndexes{Name: string(key)}
			err := d.Object(func(key []byte) error {
				var err error
				switch string(key) {
				case "committed":
					g.Committed, err = d.Uint()
				case "applied":
					g.Applied, err = d.Uint()
				case "catching_up":
					g.CatchingUp, err = d.Bool()
				default:
					err = d.Skip()
				}
				return err
			})
			behind = ApplyBacklog(g)
			return err
		})
	})
	if err == nil {
		err = d.End()
	}
	return behind, err
}

// ApplyBacklog says why a group is behind in its own view: it is catching
// up, or it has committed more than inFlight entries it has not applied
// (under steady publishing the applied index trails the commit by the
// entries in flight); "" when it is not.
func ApplyBacklog(g RaftGroupIndexes) string {
	switch {
	case g.CatchingUp:
		return fmt.Sprintf("Raft group %s is catching up", Shown(g.Name))
	case g.Committed > g.Applied+inFlight:
		return fmt.Sprintf("Raft group %s has applied %d of %d committed entries", Shown(g.Name), g.Applied, g.Committed)
	}
	return ""
}
