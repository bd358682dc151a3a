package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestConvertExitsNonZeroOnWhatItCannotCarry: NACK's example that reads
// credentials from files is printed, its two lost settings named, and the
// exit status is 1 unless the loss is accepted; without a default target
// for a resource that names none, nothing is printed. The official
// chart's rendering becomes a NatsCluster, alone or beside NACK's
// resources.
func TestConvertExitsNonZeroOnWhatItCannotCarry(t *testing.T) {
	example := "../../../shared/fixtures/nack/stream_servers.yml"
	chart := "../../../shared/fixtures/nats-chart/nats-2.14.2-jetstream-3.yaml"
	for _, tc := range []struct {
		args   []string
		status int
		out    string
		err    string
	}{
		{[]string{"-f", example}, 1, "nats://acme.org:4222", "2 settings not carried"},
		{[]string{"-f", example, "-allow-not-carried"}, 0, "kind: Stream", "spec.creds not carried"},
		{[]string{"-f", "../../../shared/fixtures/nack/stream.yml"}, 1, "", "--cluster or --server"},
		{[]string{"-f", "../../../shared/fixtures/nack/stream.yml", "-cluster", "apps/nats"}, 0, "namespace: apps", ""},
		{[]string{"-cluster", "a", "-server", "nats://b:4222"}, 2, "", "not both"},
		// The official chart's rendering, and it beside NACK's resources.
		{[]string{"-f", chart}, 0, "kind: NatsCluster", ""},
		{[]string{"-f", chart, "-f", "../../../shared/fixtures/nack/stream.yml", "-cluster", "default/nats"}, 0, "kind: Stream", ""},
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
