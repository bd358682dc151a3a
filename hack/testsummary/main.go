// Command testsummary reads `go test -json` on standard input and prints
// what plain `go test` would (each package's ok or FAIL line, and the
// output of failed tests and failed packages only), then the slowest
// top-level tests and when the slowest package ran each of its long ones
// (its parallel tests start late), so that a CI log says where its minutes
// went. It exits
// 1 when a test or package failed, or when the input ended without a
// package's result (a crashed test binary, a build failure).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// event is one line of test2json's output.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
	Time    time.Time
}

type testKey struct{ pkg, test string }

type summary struct {
	out io.Writer
	// output held per test and per package until their result is known.
	tests    map[testKey]*strings.Builder
	packages map[string]*strings.Builder
	started  map[string]bool
	timings  []timing
	failed   bool
	// when each package and each top-level test began, and how long each
	// package took.
	began     map[string]time.Time
	testBegan map[testKey]time.Time
	took      map[string]time.Duration
}

type timing struct {
	pkg, test string
	elapsed   time.Duration
	started   time.Duration // after its package's first event
}

func newSummary(out io.Writer) *summary {
	return &summary{out: out, tests: map[testKey]*strings.Builder{}, packages: map[string]*strings.Builder{}, started: map[string]bool{},
		began: map[string]time.Time{}, testBegan: map[testKey]time.Time{}, took: map[string]time.Duration{}}
}

func held(m map[string]*strings.Builder, k string) *strings.Builder {
	if m[k] == nil {
		m[k] = &strings.Builder{}
	}
	return m[k]
}

func (s *summary) add(e event) {
	switch e.Action {
	case "build-output":
		fmt.Fprint(s.out, e.Output)
		return
	case "build-fail":
		s.failed = true
		return
	}
	if e.Package != "" {
		s.started[e.Package] = true
		if _, ok := s.began[e.Package]; !ok {
			s.began[e.Package] = e.Time
		}
	}
	if e.Test != "" {
		k := testKey{e.Package, e.Test}
		switch e.Action {
		case "run", "cont":
			// A parallel test pauses at t.Parallel and continues when
			// its turn comes; go test times it from then.
			s.testBegan[k] = e.Time
		case "output":
			if s.tests[k] == nil {
				s.tests[k] = &strings.Builder{}
			}
			s.tests[k].WriteString(e.Output)
		case "fail":
			// A failed test's output is printed, and goes to the package's
			// too, as go test prints it in the package's place.
			if b := s.tests[k]; b != nil {
				held(s.packages, e.Package).WriteString(b.String())
			}
			fallthrough
		case "pass", "skip":
			if !strings.Contains(e.Test, "/") && e.Action != "skip" {
				s.timings = append(s.timings, timing{e.Package, e.Test, time.Duration(e.Elapsed * float64(time.Second)), s.testBegan[k].Sub(s.began[e.Package])})
			}
			delete(s.tests, k)
		}
		return
	}
	if e.Action == "pass" || e.Action == "fail" {
		s.took[e.Package] = time.Duration(e.Elapsed * float64(time.Second))
	}
	switch e.Action {
	case "output":
		held(s.packages, e.Package).WriteString(e.Output)
	case "pass", "skip":
		// The package's own last line ("ok ..." or "? ... [no test
		// files]") is in its output; only that line is printed.
		fmt.Fprint(s.out, lastLine(held(s.packages, e.Package).String()))
		delete(s.packages, e.Package)
		delete(s.started, e.Package)
	case "fail":
		s.failed = true
		fmt.Fprint(s.out, held(s.packages, e.Package).String())
		delete(s.packages, e.Package)
		delete(s.started, e.Package)
	}
}

func lastLine(text string) string {
	lines := strings.SplitAfter(strings.TrimRight(text, "\n"), "\n")
	return strings.TrimSpace(lines[len(lines)-1]) + "\n"
}

// finish prints what never got a result, and the slowest tests.
func (s *summary) finish(n int) {
	for pkg := range s.started {
		s.failed = true
		fmt.Fprintf(s.out, "%sFAIL\t%s\t(no result: the test binary did not finish)\n", held(s.packages, pkg).String(), pkg)
	}
	sort.Slice(s.timings, func(i, j int) bool { return s.timings[i].elapsed > s.timings[j].elapsed })
	slowest := s.timings
	if len(slowest) > n {
		slowest = slowest[:n]
	}
	if len(slowest) == 0 {
		return
	}
	fmt.Fprintf(s.out, "\nslowest tests:\n")
	for _, t := range slowest {
		fmt.Fprintf(s.out, "%8.1fs  %s  %s\n", t.elapsed.Seconds(), t.test, t.pkg)
	}
	s.timeline(15 * time.Second)
}

// timeline prints when the slowest package ran each of its tests that took
// at least long, in the order they started: a package's wall time is its
// sequential tests' sum plus however its parallel ones were packed.
func (s *summary) timeline(long time.Duration) {
	pkg := ""
	for p, d := range s.took {
		if pkg == "" || d > s.took[pkg] {
			pkg = p
		}
	}
	var tests []timing
	for _, t := range s.timings {
		if t.pkg == pkg && t.elapsed >= long {
			tests = append(tests, t)
		}
	}
	if len(tests) == 0 {
		return
	}
	sort.Slice(tests, func(i, j int) bool { return tests[i].started < tests[j].started })
	fmt.Fprintf(s.out, "\n%s took %.0fs; its tests of %s or more, from its start:\n", pkg, s.took[pkg].Seconds(), long)
	for _, t := range tests {
		fmt.Fprintf(s.out, "%7.0fs to %5.0fs  %s\n", t.started.Seconds(), (t.started + t.elapsed).Seconds(), t.test)
	}
}

func run(in io.Reader, out io.Writer) int {
	s := newSummary(out)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// Not test2json's (the go command's own errors): passed on; its
			// exit status, through the pipe, says whether it failed.
			fmt.Fprintln(out, sc.Text())
			continue
		}
		s.add(e)
	}
	s.finish(10)
	if s.failed {
		return 1
	}
	return 0
}

func main() { os.Exit(run(os.Stdin, os.Stdout)) }
