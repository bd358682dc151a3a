// Package testns names the namespace a test creates for itself, the same
// way in every tier that gives each test its own.
package testns

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Name is a fresh namespace name for t: its name (subtests included) as
// a DNS label, cut to 50 characters, with a number that keeps a rerun
// (-count) apart from the namespace of the run before, which may still be
// terminating.
func Name(t testing.TB) string {
	return nameFor(t.Name(), time.Now().UnixNano())
}

func nameFor(testName string, nanos int64) string {
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(testName))
	if len(name) > 50 {
		name = name[:50]
	}
	return strings.TrimRight(name, "-") + fmt.Sprintf("-%d", nanos%100000)
}
