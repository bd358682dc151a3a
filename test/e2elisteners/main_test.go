// Package e2elisteners_test proves the WebSocket and MQTT listeners on the
// loopback cluster (test/loopback): real nats-servers, the operator as its
// own ServiceAccount, cert-manager issuing the client certificate, and
// real clients (nats.go over wss://, paho for MQTT 3.1.1). It runs beside
// test/e2e with one cluster of its own (test/e2ekit).
package e2elisteners_test

import (
	"os"
	"testing"

	"github.com/kubenats/kubenats/test/e2ekit"
)

func TestMain(m *testing.M) {
	os.Exit(e2ekit.Run(m, e2ekit.Options{CertManager: true}))
}
