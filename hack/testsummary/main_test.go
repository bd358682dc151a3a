package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
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

// TestSummaryShowsWhenTheSlowestPackageRanItsLongTests: the slowest
// package's long tests are listed in the order they started, with their
// start and end from the package's first event, so that a parallel test
// that started late shows as such. Careless variants caught: the start
// taken from a parallel test's run event (it then waited at t.Parallel),
// the timeline of a faster package.
func TestSummaryShowsWhenTheSlowestPackageRanItsLongTests(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	in := stream(
		event{Action: "start", Package: "e2e", Time: at(0)},
		event{Action: "run", Package: "e2e", Test: "TestFirst", Time: at(1)},
		event{Action: "pass", Package: "e2e", Test: "TestFirst", Elapsed: 100, Time: at(101)},
		event{Action: "run", Package: "e2e", Test: "TestParallelLate", Time: at(2)},
		event{Action: "pause", Package: "e2e", Test: "TestParallelLate", Time: at(2)},
		event{Action: "run", Package: "e2e", Test: "TestShort", Time: at(101)},
		event{Action: "cont", Package: "e2e", Test: "TestParallelLate", Time: at(104)},
		event{Action: "pass", Package: "e2e", Test: "TestShort", Elapsed: 3, Time: at(104)},
		event{Action: "pass", Package: "e2e", Test: "TestParallelLate", Elapsed: 300, Time: at(404)},
		event{Action: "pass", Package: "e2e", Elapsed: 404, Time: at(404)},
		event{Action: "start", Package: "unit", Time: at(0)},
		event{Action: "run", Package: "unit", Test: "TestUnit", Time: at(0)},
		event{Action: "pass", Package: "unit", Test: "TestUnit", Elapsed: 40, Time: at(40)},
		event{Action: "pass", Package: "unit", Elapsed: 40, Time: at(40)},
	)
	var out bytes.Buffer
	run(strings.NewReader(in), &out)
	got := out.String()
	want := "e2e took 404s; its tests of 15s or more, from its start:\n      1s to   101s  TestFirst\n    104s to   404s  TestParallelLate\n"
	if !strings.Contains(got, want) {
		t.Errorf("output lacks\n%s\nin\n%s", want, got)
	}
	if strings.Contains(got, "unit took") {
		t.Errorf("a faster package's timeline:\n%s", got)
	}
}
