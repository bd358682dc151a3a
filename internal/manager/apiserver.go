package manager

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"os"
	"time"

	"k8s.io/client-go/rest"
)

// apiServerAddrs are the addresses the operator reaches the API server at:
// its configured host, and the in-cluster Service address. connection.servers
// may not lead there (the operator's token opens the API server, and a
// tenant could use the operator to probe it). A name that does not resolve
// within a few seconds adds nothing.
func apiServerAddrs(cfg *rest.Config) []netip.Addr {
	var hosts []string
	if u, err := url.Parse(cfg.Host); err == nil && u.Hostname() != "" {
		hosts = append(hosts, u.Hostname())
	} else if h, _, err := net.SplitHostPort(cfg.Host); err == nil {
		hosts = append(hosts, h)
	}
	if h := os.Getenv("KUBERNETES_SERVICE_HOST"); h != "" {
		hosts = append(hosts, h)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var addrs []netip.Addr
	for _, h := range hosts {
		if a, err := netip.ParseAddr(h); err == nil {
			addrs = append(addrs, a.Unmap())
			continue
		}
		found, _ := net.DefaultResolver.LookupNetIP(ctx, "ip", h)
		for _, a := range found {
			addrs = append(addrs, a.Unmap())
		}
	}
	return addrs
}
