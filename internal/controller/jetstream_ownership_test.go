package controller

import "testing"

func TestClaimOf(t *testing.T) {
	me := ownerMark{kind: "Stream", namespace: "a", name: "orders", uid: "uid-1"}
	tests := []struct {
		name, mark string
		want       claim
	}{
		{"no mark", "", claimUnmarked},
		{"mine", "Stream/a/orders/uid-1", claimMine},
		{"mine, written before marks had UIDs", "Stream/a/orders", claimMine},
		{"the same name, an earlier resource", "Stream/a/orders/uid-0", claimMarked},
		{"the same name in another namespace", "Stream/b/orders/uid-1", claimMarked},
		{"another namespace, before UIDs", "Stream/b/orders", claimMarked},
		{"a bucket's resource", "KeyValue/a/orders/uid-9", claimMarked},
		{"unreadable", "somebody", claimMarked},
		{"empty parts", "Stream//orders/uid-1", claimMarked},
		{"too many parts", "Stream/a/orders/uid-1/x", claimMarked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := claimOf(tt.mark, me); got != tt.want {
				t.Fatalf("claimOf(%q) = %v, want %v", tt.mark, got, tt.want)
			}
		})
	}
}

func TestOwnerMarkRoundTrip(t *testing.T) {
	m := ownerMark{kind: "Consumer", namespace: "ns", name: "worker", uid: "0b6f-11"}
	got, ok := parseOwnerMark(m.String())
	if !ok || got != m {
		t.Fatalf("parseOwnerMark(%q) = %+v, %v", m.String(), got, ok)
	}
}
