package natsconf

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
)

// WebSocket is the websocket block. Without its own authorization block
// nats-server authenticates WebSocket clients exactly as it does clients
// of the client port (the same users, token or trusted operator), which
// is why the model has none.
type WebSocket struct {
	Port int
	// TLS secures the listener. nats-server refuses a WebSocket listener
	// with neither TLS nor NoTLS.
	TLS *TLS
	// NoTLS serves plaintext, behind a proxy that terminates TLS.
	NoTLS bool
	// AllowedOrigins, when set, are the only Origin headers accepted.
	AllowedOrigins []string
	// Compression offers per-message deflate.
	Compression bool
}

// MQTT is the mqtt block. As for WebSocket, no authorization block of its
// own: MQTT clients authenticate as the client port's clients do.
type MQTT struct {
	Port int
	// TLS secures the listener; MQTT over TLS handshakes first.
	TLS *TLS
	// StreamReplicas of MQTT's session and retained-message streams; zero
	// leaves nats-server's choice.
	StreamReplicas int
}

// writeWebSocket writes the websocket block.
func (c *Config) writeWebSocket(w *confWriter) error {
	ws := c.WebSocket
	if ws == nil {
		return nil
	}
	w.openBlock("websocket")
	writePort(w, "port", ws.Port)
	if ws.NoTLS {
		w.keyValue("no_tls", "true")
	}
	if err := writeTLS(w, ws.TLS); err != nil {
		return fmt.Errorf("websocket: %w", err)
	}
	if len(ws.AllowedOrigins) > 0 {
		w.openArray("allowed_origins")
		for _, o := range ws.AllowedOrigins {
			quoted, err := quoteString(o)
			if err != nil {
				return fmt.Errorf("websocket allowed_origins: %w", err)
			}
			w.arrayItem(quoted)
		}
		w.closeArray()
	}
	if ws.Compression {
		w.keyValue("compression", "true")
	}
	w.closeBlock()
	return nil
}

// writeMQTT writes the mqtt block.
func (c *Config) writeMQTT(w *confWriter) error {
	m := c.MQTT
	if m == nil {
		return nil
	}
	w.openBlock("mqtt")
	writePort(w, "port", m.Port)
	if err := writeTLS(w, m.TLS); err != nil {
		return fmt.Errorf("mqtt: %w", err)
	}
	if m.StreamReplicas > 0 {
		w.keyValue("stream_replicas", strconv.Itoa(m.StreamReplicas))
	}
	w.closeBlock()
	return nil
}

// validateListeners checks what nats-server refuses of a websocket or mqtt
// block when it loads the file (validateWebsocketOptions and
// validateMQTTOptions in server/websocket.go and server/mqtt.go).
func (c *Config) validateListeners() error {
	if ws := c.WebSocket; ws != nil {
		if ws.Port <= 0 || ws.Port > 65535 {
			return fmt.Errorf("websocket port %d is out of range", ws.Port)
		}
		if ws.TLS == nil && !ws.NoTLS {
			return errors.New("websocket needs tls, or no_tls behind a proxy that terminates TLS")
		}
		if ws.TLS != nil && ws.NoTLS {
			return errors.New("websocket: tls and no_tls exclude each other")
		}
		if ws.TLS != nil && ws.TLS.HandshakeFirst {
			return errors.New("websocket tls: handshake_first applies to the client port only")
		}
		if err := validateTLS("websocket", ws.TLS); err != nil {
			return err
		}
		for _, o := range ws.AllowedOrigins {
			if err := validateOrigin(o); err != nil {
				return err
			}
		}
	}
	if m := c.MQTT; m != nil {
		if m.Port <= 0 || m.Port > 65535 {
			return fmt.Errorf("mqtt port %d is out of range", m.Port)
		}
		if c.JetStream == nil {
			return errors.New("mqtt keeps its sessions and retained messages in JetStream: it needs the jetstream block")
		}
		if c.ServerName.IsZero() {
			return errors.New("mqtt needs server_name: each server's MQTT state is named after it")
		}
		if m.StreamReplicas < 0 {
			return fmt.Errorf("mqtt stream_replicas %d is negative", m.StreamReplicas)
		}
		if m.TLS != nil && m.TLS.HandshakeFirst {
			return errors.New("mqtt tls: handshake_first applies to the client port only")
		}
		if err := validateTLS("mqtt", m.TLS); err != nil {
			return err
		}
	}
	return c.validatePortsDistinct()
}

// validatePortsDistinct refuses two listeners on one port: the second
// would fail to bind and stop the server at start.
func (c *Config) validatePortsDistinct() error {
	ports := []struct {
		name string
		port int
	}{{"port", c.Port}, {"http_port", c.HTTPPort}, {"https_port", c.HTTPSPort}}
	if c.Cluster != nil {
		ports = append(ports, struct {
			name string
			port int
		}{"cluster port", c.Cluster.Port})
	}
	if c.WebSocket != nil {
		ports = append(ports, struct {
			name string
			port int
		}{"websocket port", c.WebSocket.Port})
	}
	if c.MQTT != nil {
		ports = append(ports, struct {
			name string
			port int
		}{"mqtt port", c.MQTT.Port})
	}
	seen := map[int]string{}
	for _, p := range ports {
		if p.port == 0 {
			continue
		}
		if other, dup := seen[p.port]; dup {
			return fmt.Errorf("%s and %s are both %d", other, p.name, p.port)
		}
		seen[p.port] = p.name
	}
	return nil
}

// validateOrigin holds an allowed origin to what nats-server parses: an
// absolute http or https URL with a host.
func validateOrigin(o string) error {
	u, err := url.ParseRequestURI(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("websocket allowed origin %q must be an absolute http or https URL with a host", o)
	}
	if u.Path != "" || u.RawQuery != "" || u.User != nil {
		return fmt.Errorf("websocket allowed origin %q must be scheme://host[:port] only, as browsers send it", o)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("websocket allowed origin %q has an invalid port", o)
		}
	}
	return nil
}
