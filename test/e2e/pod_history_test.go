package e2e_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kubenats/kubenats/test/e2ekit"
)

// podHistory is e2ekit.PodHistory under the names this package's tests
// use (its checks serve the topology and metrics suites too).
type podHistory struct{ *e2ekit.PodHistory }

// recordPods watches ns's pods until the test ends.
func recordPods(t *testing.T, ns string) *podHistory {
	t.Helper()
	return &podHistory{e2ekit.RecordPods(t, ns)}
}

// deletion is the first moment a pod was seen going.
type deletion struct {
	name string
	uid  types.UID
	at   time.Time
}

func (h *podHistory) seen(t *testing.T, names []string) {
	t.Helper()
	h.Seen(t, names)
}

func (h *podHistory) froze(name string, from, until time.Time) { h.Froze(name, from, until) }
func (h *podHistory) uids(name string) []types.UID             { return h.UIDs(name) }
func (h *podHistory) touched(names ...string) []string         { return h.Touched(names...) }
func (h *podHistory) wentDown(name string, from, until time.Time) bool {
	return h.WentDown(name, from, until)
}

func (h *podHistory) mostDown(retired ...string) (int, time.Time, []string) {
	return h.MostDown(retired...)
}

func (h *podHistory) deletions() []deletion {
	var out []deletion
	for _, d := range h.Deletions() {
		out = append(out, deletion{d.Name, d.UID, d.At})
	}
	return out
}
