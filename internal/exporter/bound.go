package exporter

import (
	"cmp"
	"slices"
)

// Bound keeps stream groups, whole, in order of account and stream name,
// while their series fit in limit, and returns them with the number of
// series it left out. The order is the names', not the server's answer's,
// so that the same streams are kept scrape after scrape and a dashboard
// does not flicker between two halves of an account.
func Bound(groups []StreamGroup, limit int) (kept []Sample, dropped int) {
	sorted := slices.Clone(groups)
	slices.SortFunc(sorted, func(a, b StreamGroup) int {
		return cmp.Or(cmp.Compare(a.Account, b.Account), cmp.Compare(a.Stream, b.Stream))
	})
	for _, g := range sorted {
		if len(kept)+len(g.Samples) > limit {
			dropped += len(g.Samples)
			continue
		}
		kept = append(kept, g.Samples...)
	}
	return kept, dropped
}
