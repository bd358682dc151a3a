// Package testmem runs a piece of a test in a child process with bounded
// memory, for tests that decode adversarial input: GOMEMLIMIT, a hard
// address-space limit, and the child's peak RSS reported back. A decode
// that needs more than the bound does not fail a test by luck of the
// machine's free memory: it kills the child, which the parent sees.
//
// Only tests import it.
package testmem

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// childEnv names the case a re-executed test binary runs as a child.
const childEnv = "KUBENATS_TESTMEM_CHILD"

// CarelessEnv, set to 1 in the parent's environment, makes each child run
// its case's careless variant (the code before the fix) instead: every
// test of this kind must then fail, which is how its comment's claim was
// watched.
const CarelessEnv = "KUBENATS_TESTMEM_CARELESS"

// GoMemLimit is the soft limit every child runs under: half the
// operator's 128 MiB, so that what passes here passes there with room.
const GoMemLimit = "64MiB"

// Report is what a child said.
type Report struct {
	// Err is the decode's error text ("" when it accepted the input).
	Err string
	// PeakRSS is the child's VmHWM in bytes, at the end.
	PeakRSS int64
	// InputRSS is its VmHWM once the input was built, before the decode:
	// what the decode's own peak is measured against.
	InputRSS int64
	// Output is everything the child wrote, for failures.
	Output string
}

// Careless reports whether children run their careless variants.
func Careless() bool { return os.Getenv(CarelessEnv) == "1" }

// Run runs the test that calls it once more, as a child: the same test
// binary, only this test, under GOMEMLIMIT. The child builds the input,
// limits its address space to asHeadroom bytes over what it has mapped
// then, decodes the input, reports and exits; the parent returns the
// child's report, failing t when the child did not report (it crashed:
// out of memory, a stack overflow, a panic).
func Run(t *testing.T, asHeadroom int64, input func() []byte, decode func([]byte) error) Report {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		child(asHeadroom, input, decode)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+strings.ReplaceAll(t.Name(), "/", "$/^")+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name(), "GOMEMLIMIT="+GoMemLimit)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	r, ok := parse(out.String())
	if !ok {
		t.Fatalf("the child did not report (%v); it died decoding: %s\n%s", runErr, why(out.String()), tail(out.String()))
	}
	return r
}

// child builds the input, limits its own address space, decodes, prints
// its report and exits.
func child(asHeadroom int64, input func() []byte, decode func([]byte) error) {
	in := input()
	inputPeak, err := statusBytes("VmHWM")
	if err != nil {
		fmt.Printf("testmem: cannot read the peak RSS: %v\n", err)
		os.Exit(2)
	}
	mapped, err := statusBytes("VmSize")
	if err == nil {
		limit := uint64(mapped + asHeadroom)
		err = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit})
	}
	if err != nil {
		fmt.Printf("testmem: cannot limit the address space: %v\n", err)
		os.Exit(2)
	}
	decodeErr := decode(in)
	peak, err := statusBytes("VmHWM")
	if err != nil {
		fmt.Printf("testmem: cannot read the peak RSS: %v\n", err)
		os.Exit(2)
	}
	msg := ""
	if decodeErr != nil {
		msg = decodeErr.Error()
	}
	fmt.Printf("testmem: peak=%d input=%d err=%s\n", peak, inputPeak, strconv.Quote(msg))
	os.Exit(0)
}

// statusBytes reads one "kB" field of /proc/self/status.
func statusBytes(field string) (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		rest, ok := strings.CutPrefix(s.Text(), field+":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		return kb << 10, err
	}
	return 0, fmt.Errorf("/proc/self/status has no %s", field)
}

// parse finds the report line in a child's output.
func parse(out string) (Report, bool) {
	for _, line := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(line, "testmem: peak=")
		if !ok {
			continue
		}
		var peak, input int64
		var quoted string
		if _, err := fmt.Sscanf(rest, "%d input=%d err=%s", &peak, &input, &quoted); err != nil {
			return Report{}, false
		}
		_, errText, _ := strings.Cut(rest, " err=")
		msg, err := strconv.Unquote(errText)
		if err != nil {
			return Report{}, false
		}
		return Report{Err: msg, PeakRSS: peak, InputRSS: input, Output: out}, true
	}
	return Report{}, false
}

// why is the runtime's own account of a crash: its first "fatal error"
// and "runtime:" lines.
func why(out string) string {
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "fatal error:") || strings.HasPrefix(line, "runtime: ") || strings.HasPrefix(line, "panic:") {
			lines = append(lines, line)
			if len(lines) == 3 {
				break
			}
		}
	}
	return strings.Join(lines, "; ")
}

// tail is the end of a long output.
func tail(s string) string {
	if len(s) > 4000 {
		return "..." + s[len(s)-4000:]
	}
	return s
}

// MiB formats bytes for messages.
func MiB(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
