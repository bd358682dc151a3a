package controller

import "testing"

func TestNamespaceShare(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		workers, perNamespace int
		want                  int
	}{
		{"default: a quarter of the shipped 16", 16, 0, 4},
		{"default never below one", 3, 0, 1},
		{"one worker: the one", 1, 0, 1},
		{"asked for", 16, 2, 2},
		{"asked for more than there are: every worker", 4, 10, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := namespaceShare(tc.workers, tc.perNamespace); got != tc.want {
				t.Errorf("namespaceShare(%d, %d) = %d, want %d", tc.workers, tc.perNamespace, got, tc.want)
			}
		})
	}
}

// TestNamespacePassesHoldTheShare: a namespace at its share is refused
// until one of its passes ends, another namespace is not, and ending a
// pass twice frees one slot, not two.
func TestNamespacePassesHoldTheShare(t *testing.T) {
	var p namespacePasses
	done1, ok := p.take("a", 2)
	if !ok {
		t.Fatal("the first pass of a was refused")
	}
	if _, ok := p.take("a", 2); !ok {
		t.Fatal("the second pass of a was refused under a share of two")
	}
	if _, ok := p.take("a", 2); ok {
		t.Fatal("a third pass of a ran under a share of two")
	}
	doneB, ok := p.take("b", 2)
	if !ok {
		t.Fatal("namespace b was refused while only a was at its share")
	}
	doneB()
	done1()
	done1()
	if _, ok := p.take("a", 2); !ok {
		t.Fatal("a pass of a was refused after one of its passes ended")
	}
	if _, ok := p.take("a", 2); ok {
		t.Fatal("ending one pass twice freed two slots")
	}
}
