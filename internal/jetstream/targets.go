package jetstream

import (
	"errors"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// ErrTargetRefused is why an address of connection.servers is not dialled.
var ErrTargetRefused = errors.New("the address is not one kubenats may connect to")

// TargetPolicy says where connection.servers may lead. A tenant may name
// any address, and the operator dials it from inside the cluster with its
// own network position: so loopback (the operator's own ports), link-local
// (cloud metadata services at 169.254.169.254, fe80::/10) and the API
// server are refused, as are the unspecified addresses that reach the
// local host. Private ranges stay allowed: in-cluster NATS systems live
// there.
type TargetPolicy struct {
	// AllowLocal lets connection.servers reach all of the above: for tests
	// and development, whose servers run on 127.0.0.1.
	AllowLocal bool
	// APIServer holds the API server's addresses.
	APIServer []netip.Addr
}

// Allows reports whether a may be dialled.
func (p *TargetPolicy) Allows(a netip.Addr) error {
	if p.AllowLocal {
		return nil
	}
	a = a.Unmap()
	if a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsUnspecified() ||
		a.IsInterfaceLocalMulticast() || slices.Contains(p.APIServer, a) {
		return ErrTargetRefused
	}
	return nil
}

// CheckServerURLs refuses what one entry of connection.servers may not be:
// more than one URL (nats.go splits a comma-separated list, which would get
// past the limit on the number of servers), a scheme the guard cannot read
// (websocket framing), credentials in the URL, or no host.
func CheckServerURLs(servers []string) error {
	for _, s := range servers {
		if strings.ContainsAny(s, ", \t\r\n") {
			return errors.New("each entry of connection.servers must be one URL, without commas or spaces")
		}
		u, err := url.Parse(s)
		if err != nil || u.Hostname() == "" {
			return errors.New("an entry of connection.servers is not a URL with a host")
		}
		if u.Scheme != "nats" && u.Scheme != "tls" {
			return errors.New("connection.servers URLs must use nats:// or tls://")
		}
		if u.User != nil {
			return errors.New("connection.servers URLs may not carry credentials: use credentialsSecretRef")
		}
	}
	return nil
}
