package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func stream(events ...event) string {
	var b strings.Builder
	for _, e := range events {
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestSummaryPrintsFailuresAndTimings: a passing package prints its ok
// line alone; a failed test's output is printed with its package's FAIL;
// the slowest top-level tests come last; the status is 1 on a failure and
// on a package that never reported (a test binary killed by its timeout).
// Careless variants caught: passing output printed (CI logs drown), a
// subtest counted among the slowest, a missing result taken as a pass.
func TestSummaryPrintsFailuresAndTimings(t *testing.T) {
	in := stream(
		event{Action: "run", Package: "a", Test: "TestSlow"},
		event{Action: "output", Package: "a", Test: "TestSlow", Output: "noise of a passing test\n"},
		event{Action: "pass", Package: "a", Test: "TestSlow", Elapsed: 90},
		event{Action: "pass", Package: "a", Test: "TestSlow/sub", Elapsed: 95},
		event{Action: "output", Package: "a", Output: "ok  \ta\t90.1s\n"},
		event{Action: "pass", Package: "a", Elapsed: 90.1},
		event{Action: "output", Package: "b", Test: "TestBroken", Output: "b_test.go:9: the reason\n"},
		event{Action: "fail", Package: "b", Test: "TestBroken", Elapsed: 2},
		event{Action: "output", Package: "b", Output: "FAIL\tb\t2.0s\n"},
		event{Action: "fail", Package: "b", Elapsed: 2},
	)
	var out bytes.Buffer
	if status := run(strings.NewReader(in), &out); status != 1 {
		t.Errorf("status %d after a failure, want 1", status)
	}
	got := out.String()
	for _, want := range []string{"ok  \ta\t90.1s\n", "b_test.go:9: the reason", "FAIL\tb", "slowest tests:", "90.0s  TestSlow  a", "2.0s  TestBroken  b"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"noise of a passing test", "TestSlow/sub"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("output has %q:\n%s", unwanted, got)
		}
	}

	var killed bytes.Buffer
	if status := run(strings.NewReader(stream(event{Action: "run", Package: "c", Test: "TestHangs"})), &killed); status != 1 || !strings.Contains(killed.String(), "no result") {
		t.Errorf("a package without a result: status %d, output %q", status, killed.String())
	}
	var build bytes.Buffer
	broken := stream(event{Action: "build-output", Output: "./x_test.go:3:28: undefined: undefined\n"}, event{Action: "build-fail"},
		event{Action: "output", Package: "d", Output: "FAIL\td [build failed]\n"}, event{Action: "fail", Package: "d"})
	if status := run(strings.NewReader(broken), &build); status != 1 || !strings.Contains(build.String(), "undefined: undefined") {
		t.Errorf("a build failure: status %d, output %q", status, build.String())
	}
	var fine bytes.Buffer
	if status := run(strings.NewReader(stream(event{Action: "output", Package: "a", Output: "ok  \ta\t0.1s\n"}, event{Action: "pass", Package: "a"})), &fine); status != 0 {
		t.Errorf("all passing: status %d", status)
	}
}
