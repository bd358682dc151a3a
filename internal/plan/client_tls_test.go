package plan

import "testing"

// TestClientPlaintext: what the spec says wins; unsaid, a new cluster
// refuses plaintext and a running one keeps what its servers do. The
// careless variant that reads an unset allowPlaintext as false for every
// cluster fails the "earlier release, no client TLS" case: an upgrade
// would cut off every client of such a cluster.
func TestClientPlaintext(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name   string
		asked  *bool
		served ClientTLSServed
		want   bool
	}{
		{"new cluster", nil, ClientTLSServed{}, false},
		{"new cluster asking for plaintext", &yes, ClientTLSServed{}, true},
		{"earlier release, no client TLS", nil, ClientTLSServed{Found: true}, true},
		{"earlier release, no client TLS, spec says false", &no, ClientTLSServed{Found: true}, false},
		{"earlier release with spec.tls.client", nil, ClientTLSServed{Found: true, MountsClientTLS: true}, false},
		{"kept accepting", nil, ClientTLSServed{Found: true, Mark: ClientTLSPlaintextAccepted, MountsClientTLS: true}, true},
		{"required since", nil, ClientTLSServed{Found: true, Mark: ClientTLSRequired, MountsClientTLS: true}, false},
		{"required, spec asks for plaintext", &yes, ClientTLSServed{Found: true, Mark: ClientTLSRequired, MountsClientTLS: true}, true},
		{"unknown mark", nil, ClientTLSServed{Found: true, Mark: "bogus", MountsClientTLS: true}, false},
	}
	for _, tc := range cases {
		if got := ClientPlaintext(tc.asked, tc.served); got != tc.want {
			t.Errorf("%s: ClientPlaintext = %v, want %v", tc.name, got, tc.want)
		}
	}
}
