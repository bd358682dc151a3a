package exporter

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoServerPackageInTheExporter: the metrics container decodes the
// monitor JSON into types of its own, with the bounded reader it shares
// with the operator (internal/jsonread, which imports nothing of the
// server's). nats-server's package would bring the whole server into the
// binary and its types' unbounded fields into the decoder. Careless
// variant watched failing: importing internal/natsmon (whose JSZ is
// nats-server's JSInfo) for its decoder.
func TestNoServerPackageInTheExporter(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/nats-io/nats-server") || dep == "github.com/kubenats/kubenats/internal/natsmon" {
			t.Fatalf("the exporter depends on %s", dep)
		}
	}
}
