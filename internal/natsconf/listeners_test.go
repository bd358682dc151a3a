package natsconf

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/kubenats/kubenats/internal/pki"
)

// listenerTLS writes a CA and a server certificate into a temp dir and
// returns a TLS block that names them, for nats-server to load for real.
func listenerTLS(t *testing.T) *TLS {
	t.Helper()
	now := time.Now()
	ca, err := pki.NewCA("test CA", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := pki.Issue(ca, []string{"nats.test"}, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string]string{"tls.crt": cert.Cert, "tls.key": cert.Key, "ca.crt": ca.Cert} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return &TLS{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"), CAFile: filepath.Join(dir, "ca.crt")}
}

// serverAccepts runs nats-server's validation of the loaded options (what
// NewServer checks before it listens), beyond parsing.
func serverAccepts(t *testing.T, opts *server.Options) {
	t.Helper()
	opts.NoSigs, opts.DontListen = true, true
	opts.StoreDir = t.TempDir()
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("nats-server refuses the options: %v", err)
	}
	s.Shutdown()
}

// TestListenersLoadInNatsServer: every field of the websocket and mqtt
// blocks reaches nats-server as meant, and the result passes its own
// validation. A writer that dropped a field, or wrote compression under a
// key nats-server ignores, fails the field's check.
func TestListenersLoadInNatsServer(t *testing.T) {
	base := func() Config {
		return Config{ServerName: Env("SERVER_NAME"), Port: 4222, HTTPPort: 8222, JetStream: &JetStream{StoreDir: "/data"}}
	}
	t.Run("websocket with TLS, origins and compression", func(t *testing.T) {
		cfg := base()
		cfg.WebSocket = &WebSocket{Port: 8080, TLS: listenerTLS(t), AllowedOrigins: []string{"https://app.example.com", "http://localhost:3000"}, Compression: true}
		opts, _, _ := renderAndLoad(t, &cfg)
		equal(t, "Websocket.Port", opts.Websocket.Port, 8080)
		equal(t, "Websocket.NoTLS", opts.Websocket.NoTLS, false)
		equal(t, "Websocket.TLSConfig set", opts.Websocket.TLSConfig != nil, true)
		equal(t, "Websocket.Compression", opts.Websocket.Compression, true)
		if !slices.Equal(opts.Websocket.AllowedOrigins, []string{"https://app.example.com", "http://localhost:3000"}) {
			t.Errorf("AllowedOrigins = %v", opts.Websocket.AllowedOrigins)
		}
		serverAccepts(t, opts)
	})
	t.Run("websocket behind a TLS-terminating proxy", func(t *testing.T) {
		cfg := base()
		cfg.WebSocket = &WebSocket{Port: 8443, NoTLS: true}
		opts, _, _ := renderAndLoad(t, &cfg)
		equal(t, "Websocket.Port", opts.Websocket.Port, 8443)
		equal(t, "Websocket.NoTLS", opts.Websocket.NoTLS, true)
		equal(t, "Websocket.Compression", opts.Websocket.Compression, false)
		equal(t, "Websocket.AllowedOrigins", len(opts.Websocket.AllowedOrigins), 0)
		serverAccepts(t, opts)
	})
	t.Run("mqtt with TLS and stream replicas", func(t *testing.T) {
		cfg := base()
		cfg.MQTT = &MQTT{Port: 1883, TLS: listenerTLS(t), StreamReplicas: 3}
		opts, _, _ := renderAndLoad(t, &cfg)
		equal(t, "MQTT.Port", opts.MQTT.Port, 1883)
		equal(t, "MQTT.StreamReplicas", opts.MQTT.StreamReplicas, 3)
		equal(t, "MQTT.TLSConfig set", opts.MQTT.TLSConfig != nil, true)
		serverAccepts(t, opts)
	})
	t.Run("mqtt in plaintext, nats-server's replicas", func(t *testing.T) {
		cfg := base()
		cfg.MQTT = &MQTT{Port: 11883}
		opts, _, _ := renderAndLoad(t, &cfg)
		equal(t, "MQTT.Port", opts.MQTT.Port, 11883)
		equal(t, "MQTT.StreamReplicas", opts.MQTT.StreamReplicas, 0)
		equal(t, "MQTT.TLSConfig set", opts.MQTT.TLSConfig != nil, false)
		serverAccepts(t, opts)
	})
}

// TestListenersRefusedAsNatsServerRefuses: what nats-server would refuse
// at start is an error of Render, named so that the user can act on it.
// A model that let a websocket listener go out without TLS would stop
// every server ("websocket requires TLS configuration").
func TestListenersRefusedAsNatsServerRefuses(t *testing.T) {
	js := &JetStream{StoreDir: "/data"}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"websocket without tls or no_tls", Config{Port: 4222, WebSocket: &WebSocket{Port: 8080}}, "websocket needs tls"},
		{"websocket with both", Config{Port: 4222, WebSocket: &WebSocket{Port: 8080, NoTLS: true, TLS: &TLS{CertFile: "c", KeyFile: "k"}}}, "exclude each other"},
		{"websocket tls without key", Config{Port: 4222, WebSocket: &WebSocket{Port: 8080, TLS: &TLS{CertFile: "c"}}}, "cert_file and key_file"},
		{"websocket origin with a path", Config{Port: 4222, WebSocket: &WebSocket{Port: 8080, NoTLS: true, AllowedOrigins: []string{"https://a.example/x"}}}, "scheme://host"},
		{"websocket origin not a URL", Config{Port: 4222, WebSocket: &WebSocket{Port: 8080, NoTLS: true, AllowedOrigins: []string{"a.example"}}}, "absolute http or https"},
		{"websocket origin ftp", Config{Port: 4222, WebSocket: &WebSocket{Port: 8080, NoTLS: true, AllowedOrigins: []string{"ftp://a.example"}}}, "absolute http or https"},
		{"websocket port zero", Config{Port: 4222, WebSocket: &WebSocket{NoTLS: true}}, "out of range"},
		{"mqtt without jetstream", Config{ServerName: Env("SERVER_NAME"), Port: 4222, MQTT: &MQTT{Port: 1883}}, "needs the jetstream block"},
		{"mqtt without server name", Config{Port: 4222, JetStream: js, MQTT: &MQTT{Port: 1883}}, "needs server_name"},
		{"mqtt handshake first", Config{ServerName: Env("SERVER_NAME"), Port: 4222, JetStream: js, MQTT: &MQTT{Port: 1883, TLS: &TLS{CertFile: "c", KeyFile: "k", HandshakeFirst: true}}}, "client port only"},
		{"mqtt on the client port", Config{ServerName: Env("SERVER_NAME"), Port: 4222, JetStream: js, MQTT: &MQTT{Port: 4222}}, "both 4222"},
		{"websocket on the mqtt port", Config{ServerName: Env("SERVER_NAME"), Port: 4222, JetStream: js, MQTT: &MQTT{Port: 1883}, WebSocket: &WebSocket{Port: 1883, NoTLS: true}}, "both 1883"},
		{"websocket on the monitor port", Config{Port: 4222, HTTPPort: 8222, WebSocket: &WebSocket{Port: 8222, NoTLS: true}}, "both 8222"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.cfg.Render()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Render error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestListenersPassTheCheck: the check (which never opens the pod's
// certificate files) accepts what the operator writes for both listeners,
// TLS included, and nats-server's option processing accepts the same text.
// A forCheck that kept the websocket's tls out without standing no_tls in
// would make the check refuse every websocket cluster with TLS.
func TestListenersPassTheCheck(t *testing.T) {
	cfg := Config{ServerName: Env("SERVER_NAME"), Port: 4222, HTTPPort: 8222, JetStream: &JetStream{StoreDir: "/data"},
		WebSocket: &WebSocket{Port: 8080, TLS: &TLS{CertFile: "/etc/c", KeyFile: "/etc/k"}, AllowedOrigins: []string{"https://a.example"}, Compression: true},
		MQTT:      &MQTT{Port: 1883, TLS: &TLS{CertFile: "/etc/c", KeyFile: "/etc/k"}, StreamReplicas: 3}}
	if err := cfg.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
	text, err := cfg.forCheck().Render()
	if err != nil {
		t.Fatal(err)
	}
	assertNoKinderThanTheServer(t, text)
}

// TestCheckRefusesListenersNatsServerRefuses: hand-written texts the check
// must refuse, since nats-server refuses them at start.
func TestCheckRefusesListenersNatsServerRefuses(t *testing.T) {
	for _, text := range []string{
		"server_name: a\njetstream {}\nwebsocket { port: 8080 }\n",
		"server_name: a\nmqtt { port: 1883 }\n",
		"jetstream {}\nmqtt { port: 1883 }\n",
		"websocket { port: 8080, no_tls: true, allowed_origins: [\"example.com\"] }\n",
		"websocket { port: 8080, no_tls: true, authorization { token: x } }\n",
		// A tls block the check would have nats-server open: never.
		"websocket { port: 8080, tls { cert_file: \"/etc/passwd\", key_file: \"/etc/passwd\" } }\n",
		"server_name: a\njetstream {}\nmqtt { port: 1883, tls { cert_file: \"/etc/passwd\", key_file: \"/etc/passwd\" } }\n",
		"ws { port: 8080, no_tls: true }\n",
		"server_name: a\njetstream {}\nmqtt { port: 1883, no_auth_user: x }\n",
	} {
		if err := CheckRendered([]byte(text)); err == nil {
			t.Errorf("CheckRendered accepted %q", text)
		}
	}
}

// TestPassthroughStillRefusesListenerKeys: spec.config cannot open a
// websocket or mqtt listener of its own (with its own authorization, or
// none) beside the typed fields.
func TestPassthroughStillRefusesListenerKeys(t *testing.T) {
	for _, key := range []string{"websocket", "WebSocket", "mqtt", "MQTT"} {
		cfg := Config{Port: 4222, Extra: map[string]any{key: map[string]any{"port": int64(8080), "no_tls": true}}}
		if _, err := cfg.Render(); err == nil || !strings.Contains(err.Error(), "not an allowed passthrough setting") {
			t.Errorf("Extra %q: Render error = %v", key, err)
		}
	}
}
