package natscluster

import (
	"testing"
)

// TestCredentialProblem checks the verdict on a user's own password or
// token. nats.conf reads the value from an environment variable and
// nats-server lexes it as config, so a value is fine only if it comes back
// as the very same string. Each "refused" row was seen to break or change
// the value in nats-server v2.15.3.
func TestCredentialProblem(t *testing.T) {
	for _, tc := range []struct {
		value   string
		refused bool
	}{
		{"", true},
		{"0123456789", true}, // a number
		{"-5", true},
		{"64k", true},      // a size: 64000
		{"9abcdef", false}, // a string to nats-server, leading digit or not
		{"yes", true},      // a bool
		{"true", true},
		{"Off", true},
		{"abc,", true}, // read as "abc"
		{"a,b", true},  // syntax errors
		{"a;b", true},
		{"a}b", true},
		{"a]b", true},
		{"(abc", true},
		{"{a: b}", true},
		{"[a]", true},
		{"abc def", true},
		{`a"b`, false},
		{"$SERVER_NAME", true}, // another variable
		{"plain-Letters_123", false},
		{"s3cret-Passw0rd", false},
		{"1e5", false}, // nats-server keeps this one a string
	} {
		t.Run(tc.value, func(t *testing.T) {
			got := credentialProblem(tc.value)
			if (got != "") != tc.refused {
				t.Fatalf("credentialProblem(%q) = %q, want refused=%t", tc.value, got, tc.refused)
			}
		})
	}
}

func TestNewSecretValueIsLetterFirstAlphanumericAndAcceptable(t *testing.T) {
	const n = 1000
	isLetter := func(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }
	isDigit := func(b byte) bool { return b >= '0' && b <= '9' }
	seen := make(map[string]bool, n)
	used, usedFirst := map[byte]bool{}, map[byte]bool{}
	for i := range n {
		v, err := newSecretValue()
		if err != nil {
			t.Fatalf("newSecretValue: %v", err)
		}
		if len(v) != 32 {
			t.Fatalf("value %q has %d characters, want 32", v, len(v))
		}
		if !isLetter(v[0]) {
			t.Fatalf("value %q starts with %q, want a letter", v, v[0])
		}
		for j := 0; j < len(v); j++ {
			if !isLetter(v[j]) && !isDigit(v[j]) {
				t.Fatalf("value %q has %q at %d, want only [A-Za-z0-9]", v, v[j], j)
			}
		}
		if seen[v] {
			t.Fatalf("value %q generated twice within %d values", v, i+1)
		}
		seen[v] = true
		usedFirst[v[0]] = true
		for j := 0; j < len(v); j++ {
			used[v[j]] = true
		}
		if p := credentialProblem(v); p != "" {
			t.Fatalf("credentialProblem(%q) = %q, want none for a generated value", v, p)
		}
	}
	// Every character of the alphabet shows up: a skewed or shrunken
	// alphabet would go unnoticed by the checks above. Missing one by
	// chance has a probability below 1e-6.
	if len(used) != 62 {
		t.Errorf("%d values use %d distinct characters, want all 62 of [A-Za-z0-9]", n, len(used))
	}
	if len(usedFirst) != 52 {
		t.Errorf("%d values start with %d distinct letters, want all 52", n, len(usedFirst))
	}
}
