package status

import (
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestBoundMessage(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		cut  bool
	}{
		{"short", "the server object matches the spec", false},
		{"exactly at the bound", strings.Repeat("a", MaxMessage), false},
		{"one over", strings.Repeat("a", MaxMessage+1), true},
		{"huge", strings.Repeat("x", 10<<20), true},
		{"multi-byte runes across the cut", strings.Repeat("é", MaxMessage), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := BoundMessage(tc.in)
			if len(got) > MaxMessage {
				t.Errorf("len = %d", len(got))
			}
			if !utf8.ValidString(got) {
				t.Error("cut inside a rune")
			}
			if cut := got != tc.in; cut != tc.cut {
				t.Errorf("cut = %v, want %v", cut, tc.cut)
			}
			if tc.cut && !strings.HasSuffix(got, truncated) {
				t.Error("a cut message is not marked")
			}
		})
	}
}

// TestConditionMessagesAreBounded: every condition the package writes goes
// through the bound.
func TestConditionMessagesAreBounded(t *testing.T) {
	long := strings.Repeat("nats-server rejects the configuration: ", 1000)
	conds := ReadyConditions(nil, 1, metav1.Now(), Pass{Reason: "ServerError", Message: long})
	if got := len(conds[0].Message); got > MaxMessage {
		t.Fatalf("condition message of %d bytes", got)
	}
}
