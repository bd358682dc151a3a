package jetstream

import (
	"context"
	"errors"
	"fmt"
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
// (cloud metadata services at 169.254.169.254, fe80::/10), the other
// metadata addresses (AWS's fd00:ec2::254, Alibaba's 100.100.100.200) and
// the API server are refused, as are the unspecified addresses that reach
// the local host, and any of these behind a NAT64 prefix or an
// IPv4-mapped address. Private ranges stay allowed: in-cluster NATS
// systems live there, unless the operator narrows them with AllowedCIDRs.
// But not the pods and Services of other namespaces (Holders): they are
// other tenants', and the operator's network position is not the
// tenant's. Every NatsCluster's NetworkPolicy admits the operator to the
// client and monitor ports; a tenant whose own pods that policy keeps out
// would otherwise reach another tenant's servers through the operator,
// past spec.jetstream.allowedNamespaces too.
type TargetPolicy struct {
	// AllowLocal lets connection.servers reach all of the above: for tests
	// and development, whose servers run on 127.0.0.1.
	AllowLocal bool
	// APIServer holds the API server's addresses known at start (the
	// operator's configured host, KUBERNETES_SERVICE_HOST).
	APIServer []netip.Addr
	// APIServerNow, when set, gives the API server's addresses as they are
	// now (the kubernetes Service's ClusterIPs and its endpoints, kept
	// fresh): refused too. They move (a control plane replaced, a Service
	// CIDR changed), which a list read once would miss.
	APIServerNow func() []netip.Addr
	// AllowedCIDRs, when not empty, is all connection.servers may reach
	// (--connection-allowed-cidrs); the refusals above apply within it.
	AllowedCIDRs []netip.Prefix
	// Holders, when set, names the namespaces whose pods (by their
	// primary address) or Services (by their primary ClusterIP) hold an
	// address. An address another namespace than the resource's holds is
	// refused, unless OtherNamespaces; one whose holders cannot be told
	// is refused too.
	Holders func(ctx context.Context, a netip.Addr) ([]string, error)
	// OtherNamespaces lets connection.servers reach the pods and Services
	// of other namespaces (--connection-allow-other-namespaces).
	OtherNamespaces bool
}

// AllowsFrom reports whether a resource of namespace ns may have a
// dialled: Allows, and a is no other namespace's pod or Service.
func (p *TargetPolicy) AllowsFrom(ctx context.Context, ns string, a netip.Addr) error {
	if err := p.Allows(a); err != nil {
		return err
	}
	if p.OtherNamespaces || p.Holders == nil {
		return nil
	}
	holders, err := p.Holders(ctx, a.Unmap())
	if err != nil {
		return fmt.Errorf("%w: whether another namespace's pod or Service has it cannot be told (%v)", ErrTargetRefused, err)
	}
	if heldElsewhere(holders, ns) {
		return fmt.Errorf("%w: it is a pod's or Service's of another namespace (--connection-allow-other-namespaces)", ErrTargetRefused)
	}
	return nil
}

// heldElsewhere reports whether any of the namespaces holding an address
// is not ns.
func heldElsewhere(holders []string, ns string) bool {
	return slices.ContainsFunc(holders, func(h string) bool { return h != ns })
}

// Allows reports whether a may be dialled.
func (p *TargetPolicy) Allows(a netip.Addr) error {
	a = a.Unmap()
	if len(p.AllowedCIDRs) > 0 && !slices.ContainsFunc(p.AllowedCIDRs, func(c netip.Prefix) bool { return c.Contains(a) }) {
		return fmt.Errorf("%w: outside the operator's --connection-allowed-cidrs", ErrTargetRefused)
	}
	if p.AllowLocal {
		return nil
	}
	api := p.APIServer
	if p.APIServerNow != nil {
		api = append(slices.Clip(api), p.APIServerNow()...)
	}
	if why := deniedTarget(a, api); why != "" {
		return fmt.Errorf("%w: %s", ErrTargetRefused, why)
	}
	return nil
}

// Addresses no connection.servers entry may reach, beyond the classes
// netip names (loopback, link-local, unspecified).
var (
	// awsMetadataV6 is the EC2 instance metadata service over IPv6.
	awsMetadataV6 = netip.MustParseAddr("fd00:ec2::254")
	// alibabaMetadata is Alibaba Cloud's metadata service.
	alibabaMetadata = netip.MustParseAddr("100.100.100.200")
	// nat64WellKnown (RFC 6052) and nat64Local (RFC 8215) carry an IPv4
	// address that a NAT64 gateway dials on the operator's behalf.
	nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48")
	// thisNetwork (0.0.0.0/8) reaches the local host on Linux, beyond
	// 0.0.0.0 itself.
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
)

// deniedTarget says why a (unmapped) may not be dialled, "" when it may:
// a pure decision over the address and the API server's addresses. An
// IPv6 address that embeds an IPv4 one (NAT64) is refused when that IPv4
// address is.
func deniedTarget(a netip.Addr, apiServer []netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsUnspecified() || a.Is4() && thisNetwork.Contains(a):
		return "the local host"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast():
		return "link-local"
	case a == awsMetadataV6 || a == alibabaMetadata:
		return "a cloud metadata service"
	case slices.ContainsFunc(apiServer, func(s netip.Addr) bool { return s.Unmap() == a }):
		return "the Kubernetes API server"
	}
	for _, v4 := range embeddedIPv4(a) {
		// 0.0.0.0/8 behind NAT64 reaches the gateway's host, not the
		// operator's; and the zeros of one layout read under another
		// always fall there, which would refuse the whole local prefix.
		if thisNetwork.Contains(v4) {
			continue
		}
		if why := deniedTarget(v4, apiServer); why != "" {
			return why + " behind NAT64 (" + v4.String() + ")"
		}
	}
	return ""
}

// embeddedIPv4 are the IPv4 addresses a NAT64 address may stand for. The
// well-known prefix is a /96 (the last four bytes); the local-use /48 may
// be used with any RFC 6052 prefix length within it (/48, /56, /64, /96),
// each placing the four bytes elsewhere around the reserved byte 8, so
// every reading is returned.
func embeddedIPv4(a netip.Addr) []netip.Addr {
	if !a.Is6() {
		return nil
	}
	b := a.As16()
	v4 := func(i ...int) netip.Addr { return netip.AddrFrom4([4]byte{b[i[0]], b[i[1]], b[i[2]], b[i[3]]}) }
	switch {
	case nat64WellKnown.Contains(a):
		return []netip.Addr{v4(12, 13, 14, 15)}
	case nat64Local.Contains(a):
		return []netip.Addr{v4(6, 7, 9, 10), v4(7, 9, 10, 11), v4(9, 10, 11, 12), v4(12, 13, 14, 15)}
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
