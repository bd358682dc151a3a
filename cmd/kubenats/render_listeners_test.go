package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderListenersGolden: `kubenats render` prints the WebSocket and
// MQTT listeners in nats.conf, on both Services, in the NetworkPolicy and
// in the PeerAuthentication (regenerate with -update).
func TestRenderListenersGolden(t *testing.T) {
	input, golden := filepath.Join("testdata", "listeners.yaml"), filepath.Join("testdata", "listeners.golden.yaml")
	got := renderOK(t, input)
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	if got != string(want) {
		t.Errorf("render -f %s differs from %s:\n%s", input, golden, firstDifference(string(want), got))
	}
	for _, s := range []string{"websocket {", "mqtt {", "stream_replicas: 3", "allowed_origins", "no_tls: true",
		"name: websocket", "name: mqtt", "appProtocol: https", "appProtocol: tls", "port: 8883"} {
		if !strings.Contains(got, s) {
			t.Errorf("the output lacks %q", s)
		}
	}
}

// TestRenderRefusesListenersAdmissionWouldRefuse: without an API server
// to refuse them, render refuses what nats-server could not start with,
// naming the cluster and the reason.
func TestRenderRefusesListenersAdmissionWouldRefuse(t *testing.T) {
	const head = "apiVersion: kubenats.io/v1alpha1\nkind: NatsCluster\nmetadata:\n  name: bad\nspec:\n"
	for _, tc := range []struct{ name, spec, want string }{
		{"mqtt without JetStream", "  jetstream: {enabled: false}\n  mqtt: {}\n", "needs the jetstream block"},
		{"mqtt on the client port", "  mqtt: {port: 4222}\n", "both 4222"},
		{"websocket in spec.config", "  config:\n    websocket: {port: 8080, no_tls: true}\n", "websocket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "render", "-f", writeFile(t, head+tc.spec))
			if code != 1 || stdout != "" || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "bad") {
				t.Errorf("exit %d, stdout %d bytes, stderr %q; want exit 1, nothing printed, an error naming bad and %q", code, len(stdout), stderr, tc.want)
			}
		})
	}
}
