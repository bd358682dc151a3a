package main

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitNamespaces(t *testing.T) {
	for in, want := range map[string][]string{
		"":             nil,
		"a":            {"a"},
		"a,b":          {"a", "b"},
		" a , b ,, c ": {"a", "b", "c"},
		",":            nil,
	} {
		if got := splitNamespaces(in); !slices.Equal(got, want) {
			t.Errorf("splitNamespaces(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSplitCIDRs(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []string
		refused bool
	}{
		{"", nil, false},
		{"10.0.0.0/8", []string{"10.0.0.0/8"}, false},
		{" 10.1.2.3/16 , fd00::/8 ,, ", []string{"10.1.0.0/16", "fd00::/8"}, false},
		{"10.0.0.1", nil, true}, // an address is not a CIDR: refused, never widened
		{"10.0.0.0/8,bogus", nil, true},
	} {
		got, err := splitCIDRs(tc.in)
		if (err != nil) != tc.refused {
			t.Errorf("splitCIDRs(%q) error = %v, refused want %t", tc.in, err, tc.refused)
			continue
		}
		var s []string
		for _, p := range got {
			s = append(s, p.String())
		}
		if !tc.refused && !slices.Equal(s, tc.want) {
			t.Errorf("splitCIDRs(%q) = %v, want %v", tc.in, s, tc.want)
		}
	}
}

// TestManagerFlagsConnectionAllowLists: the allow-list flags reach the
// manager's options, and a malformed CIDR stops the operator at start.
func TestManagerFlagsConnectionAllowLists(t *testing.T) {
	var stderr strings.Builder
	if code := runManager([]string{"--connection-allowed-cidrs=10.0.0.0/8,not-a-cidr"}, &stderr); code != 2 {
		t.Errorf("a malformed CIDR: exit %d, want 2 (%s)", code, stderr.String())
	}
}

// TestAllowedImageRegistriesFlagRefusesWhatIsNoRegistry: a mistyped entry
// stops the operator at start instead of allowing or refusing every image.
func TestAllowedImageRegistriesFlagRefusesWhatIsNoRegistry(t *testing.T) {
	var stderr strings.Builder
	if rc := runManager([]string{"--allowed-image-registries=registry.example.com,https://evil"}, &stderr); rc != 2 {
		t.Fatalf("exit %d, want 2 (flag error); stderr: %s", rc, stderr.String())
	}
	if !strings.Contains(stderr.String(), "https://evil") {
		t.Errorf("the error does not name the entry: %s", stderr.String())
	}
}

// TestAllowedIngressFlagsRefuseWhatTheyCannotMatch: a host that is no host
// name, or an annotation with a "*" inside, stops the operator at start
// instead of matching nothing (or everything).
func TestAllowedIngressFlagsRefuseWhatTheyCannotMatch(t *testing.T) {
	for _, arg := range []string{"--allowed-ingress-hosts=nats.example.com,https://evil", "--allowed-ingress-annotations=nginx.*/snippet"} {
		var stderr strings.Builder
		if rc := runManager([]string{arg}, &stderr); rc != 2 {
			t.Errorf("%s: exit %d, want 2 (flag error); stderr: %s", arg, rc, stderr.String())
		}
	}
}
