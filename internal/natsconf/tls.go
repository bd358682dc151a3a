package natsconf

import (
	"fmt"
	"strconv"
	"time"
)

// TLS is a tls block: the listener's certificate and, for mutual TLS, the
// CA that peers' certificates must chain to. Paths are files the container
// mounts; nats-server reads them at start and on every reload, which is how
// a renewed certificate is served without a restart.
type TLS struct {
	CertFile string
	KeyFile  string
	// CAFile verifies peers (and, for routes, the servers this one dials).
	CAFile string
	// Verify requires a certificate from every peer, checked against CAFile.
	Verify bool
	// HandshakeFirst starts TLS before the server's INFO, for clients that
	// speak TLS first (client listener only).
	HandshakeFirst bool
	// Timeout of the handshake; zero keeps nats-server's default.
	Timeout time.Duration
}

// writeTLS writes a tls block inside the current one.
func writeTLS(w *confWriter, t *TLS) error {
	if t == nil {
		return nil
	}
	w.openBlock("tls")
	for _, f := range []struct{ key, path string }{
		{"cert_file", t.CertFile}, {"key_file", t.KeyFile}, {"ca_file", t.CAFile},
	} {
		if f.path == "" {
			continue
		}
		if err := writeString(w, f.key, f.path); err != nil {
			return fmt.Errorf("tls: %w", err)
		}
	}
	if t.Verify {
		w.keyValue("verify", "true")
	}
	if t.HandshakeFirst {
		w.keyValue("handshake_first", "true")
	}
	if t.Timeout > 0 {
		// nats-server takes the handshake timeout in seconds.
		w.keyValue("timeout", strconv.FormatFloat(t.Timeout.Seconds(), 'f', -1, 64))
	}
	w.closeBlock()
	return nil
}

// validateTLS checks what nats-server refuses when it loads a tls block.
func validateTLS(where string, t *TLS) error {
	if t == nil {
		return nil
	}
	if t.CertFile == "" || t.KeyFile == "" {
		return fmt.Errorf("%s tls: a listener needs both cert_file and key_file", where)
	}
	if t.Verify && t.CAFile == "" {
		return fmt.Errorf("%s tls: verify needs ca_file to check peers against", where)
	}
	if t.Timeout < 0 {
		return fmt.Errorf("%s tls: negative timeout %s", where, t.Timeout)
	}
	return nil
}
