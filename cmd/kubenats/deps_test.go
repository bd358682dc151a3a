package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestTheOperatorDoesNotLinkNatsServer: the operator reads what servers
// send into its own small types (internal/natsmon) and checks nats.conf
// with the config parser and its own rules (internal/natsconf); only
// tests link nats-server's server package. It would bring back its types
// (hundreds of bytes per element a hostile server can make it build) and
// some 13 MB of the operator's binary. The config parser package is
// allowed: it imports nothing of the server. (Watched failing: a blank
// import of the server package in this command lists 15 packages.)
func TestTheOperatorDoesNotLinkNatsServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/nats-io/nats-server/") && pkg != "github.com/nats-io/nats-server/v2/conf" {
			t.Errorf("the operator links %s", pkg)
		}
	}
}
