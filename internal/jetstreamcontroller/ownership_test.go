package jetstreamcontroller

import (
	"testing"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

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

// TestGuestMayAdopt: a resource on another namespace's NatsCluster adopts
// only what a gone resource of its own namespace made. Careless variant
// watched failing: main before this check, where adoptExisting alone let a
// guest take over the cluster team's unmarked (natscli-made) streams.
func TestGuestMayAdopt(t *testing.T) {
	on := func(ns string, ref *v1alpha1.ClusterRef) *v1alpha1.Stream {
		s := &v1alpha1.Stream{}
		s.Namespace, s.Spec.Target = ns, v1alpha1.Target{Cluster: ref}
		return s
	}
	home := &v1alpha1.ClusterRef{Namespace: "home", Name: "nats"}
	tests := []struct {
		name  string
		obj   *v1alpha1.Stream
		claim claim
		owner ownerMark
		want  bool
	}{
		{"the cluster's namespace, unmarked", on("home", home), claimUnmarked, ownerMark{}, true},
		{"the cluster's namespace, no namespace in the ref", on("home", &v1alpha1.ClusterRef{Name: "nats"}), claimUnmarked, ownerMark{}, true},
		{"a connection of its own", on("guest", nil), claimUnmarked, ownerMark{}, true},
		{"a guest, unmarked", on("guest", home), claimUnmarked, ownerMark{}, false},
		{"a guest, made from the cluster's namespace", on("guest", home), claimMarked, ownerMark{kind: "Stream", namespace: "home", name: "x", uid: "u"}, false},
		{"a guest, made from a third namespace", on("guest", home), claimMarked, ownerMark{kind: "Stream", namespace: "third", name: "x", uid: "u"}, false},
		{"a guest, made from its own namespace", on("guest", home), claimMarked, ownerMark{kind: "Stream", namespace: "guest", name: "x", uid: "u"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := guestMayAdopt(tt.obj, tt.claim, tt.owner); got != tt.want {
				t.Fatalf("guestMayAdopt = %v, want %v", got, tt.want)
			}
		})
	}
}
