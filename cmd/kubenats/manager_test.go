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
