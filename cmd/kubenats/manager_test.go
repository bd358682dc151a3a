package main

import (
	"slices"
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
