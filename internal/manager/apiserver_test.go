package manager

import (
	"net/netip"
	"slices"
	"testing"

	"k8s.io/client-go/rest"
)

func TestAPIServerAddrs(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
	for host, want := range map[string]string{
		"https://192.0.2.10:6443":   "192.0.2.10",
		"https://[2001:db8::1]:443": "2001:db8::1",
		"192.0.2.11:6443":           "192.0.2.11",
		"https://localhost:6443":    "127.0.0.1",
	} {
		got := apiServerAddrs(&rest.Config{Host: host})
		for _, w := range []string{want, "10.96.0.1"} {
			if !slices.Contains(got, netip.MustParseAddr(w)) {
				t.Errorf("apiServerAddrs(%q) = %v, lacks %s", host, got, w)
			}
		}
	}
}
