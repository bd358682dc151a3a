package jetstreamcontroller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

func TestWrittenStatusStandsInForAStaleCache(t *testing.T) {
	stream := func(uid string, gen int64, hash string) *v1alpha1.Stream {
		s := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "orders", UID: types.UID(uid), Generation: gen}}
		s.Status.ServerConfigHash = hash
		return s
	}
	var w writtenStatuses
	if got := w.current(stream("1", 1, "")).ServerConfigHash; got != "" {
		t.Fatalf("nothing written yet: got %q, want the cached status", got)
	}
	w.wrote(stream("1", 1, "written"))
	for _, tc := range []struct {
		name   string
		cached *v1alpha1.Stream
		want   string
	}{
		{"the cache lags behind the write", stream("1", 1, ""), "written"},
		{"the cache caught up", stream("1", 1, "written"), "written"},
		{"the spec changed since", stream("1", 2, "older"), "older"},
		{"a new resource of the same name", stream("2", 1, ""), ""},
	} {
		if got := w.current(tc.cached).ServerConfigHash; got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	// Once the cache caught up, nothing is kept (careless variant: keeping
	// every status written until the resource goes).
	w.wrote(stream("1", 1, "again"))
	w.current(stream("1", 1, ""))
	if n := w.len(); n != 1 {
		t.Fatalf("%d statuses kept while the cache lags, want 1", n)
	}
	w.current(stream("1", 1, "again"))
	if n := w.len(); n != 0 {
		t.Fatalf("%d statuses kept after the cache caught up, want 0", n)
	}
	w.wrote(stream("1", 1, "written"))
	w.forget(types.NamespacedName{Namespace: "ns", Name: "orders"})
	if got := w.current(stream("1", 1, "")).ServerConfigHash; got != "" {
		t.Fatalf("forgotten: got %q, want the cached status", got)
	}
}

func (w *writtenStatuses) len() int {
	n := 0
	w.m.Range(func(any, any) bool { n++; return true })
	return n
}
