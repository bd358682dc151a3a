package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConvertReadsNoEnvironment: `kubenats convert` of a chart release
// whose nats.conf refers to a variable it does not define, set in the
// environment of whoever runs the command: nothing of its value is
// printed, on standard output or error, and the refusal names the
// reference. Careless variant: nats-server's parser left to fall back to
// os.LookupEnv, as it did (watched: the value printed in spec.config).
func TestConvertReadsNoEnvironment(t *testing.T) {
	const secret = "s3cret-from-the-environment"
	t.Setenv("KUBENATS_CONVERT_LEAK", secret)
	data, err := os.ReadFile("../../internal/convert/testdata/chart-minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "NATS_CONF\n", "    port: 4222\n    write_deadline: $KUBENATS_CONVERT_LEAK\n", 1)
	text = strings.Replace(text, "CONTAINER_ENV\n", "", 1)
	file := filepath.Join(t.TempDir(), "release.yaml")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	status := runConvert([]string{"-f", file, "-allow-not-carried"}, &stdout, &stderr)
	if strings.Contains(stdout.String()+stderr.String(), secret) {
		t.Fatalf("the environment's value was printed:\n%s\n%s", stdout.String(), stderr.String())
	}
	if status != 1 || !strings.Contains(stderr.String(), "refers to $KUBENATS_CONVERT_LEAK,") {
		t.Fatalf("status %d, stderr %q: want the reference refused by name", status, stderr.String())
	}
}
