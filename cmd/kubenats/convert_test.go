package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubenats/kubenats/test/upstream"
)

// TestConvertExitsNonZeroOnWhatItCannotCarry: NACK's example that reads
// credentials from files is printed, its two lost settings named, and the
// exit status is 1 unless the loss is accepted; without a default target
// for a resource that names none, nothing is printed. The official
// chart's rendering becomes a NatsCluster, alone or beside NACK's
// resources. (NACK's examples and the chart's rendering: package upstream,
// the project's stand-ins unless KUBENATS_UPSTREAM_FIXTURES names the real
// files.)
func TestConvertExitsNonZeroOnWhatItCannotCarry(t *testing.T) {
	nack := upstream.NACKExamples(t)
	example := filepath.Join(nack, "stream_servers.yml")
	stream := filepath.Join(nack, "stream.yml")
	chart := upstream.ChartFile(t)
	for _, tc := range []struct {
		args   []string
		status int
		out    string
		err    string
	}{
		{[]string{"-f", example}, 1, "nats://acme.org:4222", "2 settings not carried"},
		{[]string{"-f", example, "-allow-not-carried"}, 0, "kind: Stream", "spec.creds not carried"},
		{[]string{"-f", stream}, 1, "", "--cluster or --server"},
		{[]string{"-f", stream, "-cluster", "apps/nats"}, 0, "namespace: apps", ""},
		{[]string{"-cluster", "a", "-server", "nats://b:4222"}, 2, "", "not both"},
		// The official chart's rendering, and it beside NACK's resources.
		{[]string{"-f", chart}, 0, "kind: NatsCluster", ""},
		{[]string{"-f", chart, "-f", stream, "-cluster", "default/nats"}, 0, "kind: Stream", ""},
	} {
		var stdout, stderr bytes.Buffer
		status := runConvert(tc.args, &stdout, &stderr)
		if status != tc.status || !strings.Contains(stdout.String(), tc.out) || !strings.Contains(stderr.String(), tc.err) {
			t.Errorf("convert %v: status %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, status, stdout.String(), stderr.String(), tc.status, tc.out, tc.err)
		}
		if tc.status != 0 && tc.out == "" && stdout.Len() != 0 {
			t.Errorf("convert %v printed resources although it failed", tc.args)
		}
	}
}
