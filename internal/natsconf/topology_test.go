package natsconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/kubenats/kubenats/internal/pki"
)

// writeTLSFiles writes a CA and a certificate signed by it into dir and
// returns the TLS block that names them.
func writeTLSFiles(t *testing.T, dir string) *TLS {
	t.Helper()
	now := time.Now()
	ca, err := pki.NewCA("test CA", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := pki.Issue(ca, []string{"nats-0.nats-headless"}, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"tls.crt": cert.Cert, "tls.key": cert.Key, "ca.crt": ca.Cert}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return &TLS{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"), CAFile: filepath.Join(dir, "ca.crt")}
}

// topologyConfig is a config with a leafnode listener, two remotes (one
// by a URL variable of an included file, one with creds and TLS) and a
// gateway, with every file they name in dir.
func topologyConfig(t *testing.T, dir string) *Config {
	t.Helper()
	tls := writeTLSFiles(t, dir)
	creds := filepath.Join(dir, "hub.creds")
	if err := os.WriteFile(creds, []byte("placeholder"), 0o600); err != nil {
		t.Fatal(err)
	}
	leafTLS := *tls
	leafTLS.Verify, leafTLS.HandshakeFirst = true, true
	gwTLS := *tls
	gwTLS.Verify = true
	return &Config{
		ServerName: Env("SERVER_NAME"), Port: 4222,
		Cluster: &Cluster{Name: "east", Port: 6222},
		Accounts: []Account{
			{Name: "APP", Users: []User{{User: String("app"), Password: Env("APP_PASSWORD")}}},
			{Name: "SYS", Users: []User{{User: String("sys"), Password: Env("SYS_PASSWORD")}}},
		},
		SystemAccount: "SYS",
		Leafnodes: &Leafnodes{
			Port:          7422,
			Authorization: &LeafAuthorization{User: String("leaf"), Password: Env("NATS_LEAFNODE_PASSWORD"), Account: "APP"},
			TLS:           &leafTLS,
			Remotes: []LeafRemote{
				{URLs: []Value{Env("KUBENATS_LEAF_HUB_URL_0")}, Account: "APP", DenyImports: []string{"secret.>"}, DenyExports: []string{"private.*"}},
				{URLs: []Value{String("tls://hub.example:7422")}, Account: "SYS", Credentials: creds, TLS: &TLS{CAFile: tls.CAFile}},
			},
		},
		Gateway: &Gateway{
			Name: "east", Port: 7222, Advertise: Env("NATS_GATEWAY_ADVERTISE"),
			Authorization: &RouteAuthorization{User: Env("NATS_GATEWAY_USER"), Password: Env("NATS_GATEWAY_PASSWORD")},
			TLS:           &gwTLS,
			Gateways:      []GatewayRemote{{Name: "west", URLs: Env("NATS_GATEWAY_0_URLS")}},
		},
		MoreIncludes: []string{"leafnodes.conf"},
	}
}

// TestTopologyLoadsInNatsServer holds the leafnodes and gateway blocks to
// nats-server's own option processing, with the files in place as the pod
// has them: the included file's URL variable, the environment's
// credentials and URL array. A careless writer (the deny lists under one
// key, a remote's account dropped, the gateway URLs written as a string)
// shows here as an option nats-server did not set.
func TestTopologyLoadsInNatsServer(t *testing.T) {
	dir := t.TempDir()
	cfg := topologyConfig(t, dir)
	t.Setenv("NATS_LEAFNODE_PASSWORD", "leafSecret1")
	t.Setenv("NATS_GATEWAY_USER", "gw")
	t.Setenv("NATS_GATEWAY_PASSWORD", "gwSecret1")
	t.Setenv("NATS_GATEWAY_ADVERTISE", "nats-0.nats-headless.east.svc:7222")
	t.Setenv("NATS_GATEWAY_0_URLS", `["nats://gw:gwSecret1@west-0.west-headless.west.svc:7222"]`)
	setPodEnv(t)
	if err := os.WriteFile(filepath.Join(dir, "leafnodes.conf"), []byte(`KUBENATS_LEAF_HUB_URL_0: "nats-leaf://me:hubPass@hub.example:7422"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	text, err := cfg.Render()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(text), "hubPass") || strings.Contains(string(text), "gwSecret1") {
		t.Fatalf("a credential is in nats.conf:\n%s", text)
	}
	path := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(path, text, 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server refused:\n%s\n%v", text, err)
	}
	l := opts.LeafNode
	equal(t, "leafnode port", l.Port, 7422)
	equal(t, "leafnode user", l.Username, "leaf")
	equal(t, "leafnode password", l.Password, "leafSecret1")
	equal(t, "leafnode account", l.Account, "APP")
	equal(t, "leafnode handshake_first", l.TLSHandshakeFirst, true)
	if l.TLSConfig == nil || l.TLSConfig.ClientCAs == nil {
		t.Fatal("leafnode TLS without verification")
	}
	if len(l.Remotes) != 2 {
		t.Fatalf("remotes: %d, want 2", len(l.Remotes))
	}
	hub := l.Remotes[0]
	equal(t, "remote URL", hub.URLs[0].String(), "nats-leaf://me:hubPass@hub.example:7422")
	equal(t, "remote account", hub.LocalAccount, "APP")
	equal(t, "deny imports", strings.Join(hub.DenyImports, ","), "secret.>")
	equal(t, "deny exports", strings.Join(hub.DenyExports, ","), "private.*")
	second := l.Remotes[1]
	equal(t, "creds", second.Credentials, filepath.Join(dir, "hub.creds"))
	equal(t, "remote account 2", second.LocalAccount, "SYS")
	if second.TLSConfig == nil || second.TLSConfig.RootCAs == nil {
		t.Fatal("the TLS remote does not verify the hub")
	}
	g := opts.Gateway
	equal(t, "gateway name", g.Name, "east")
	equal(t, "gateway port", g.Port, 7222)
	equal(t, "gateway user", g.Username, "gw")
	equal(t, "gateway password", g.Password, "gwSecret1")
	equal(t, "gateway advertise", g.Advertise, "nats-0.nats-headless.east.svc:7222")
	if g.TLSConfig == nil || g.TLSConfig.ClientCAs == nil {
		t.Fatal("gateway TLS is not mutual")
	}
	if len(g.Gateways) != 1 || g.Gateways[0].Name != "west" || len(g.Gateways[0].URLs) != 1 ||
		g.Gateways[0].URLs[0].Host != "west-0.west-headless.west.svc:7222" {
		t.Fatalf("gateways: %+v", g.Gateways)
	}
}

// TestTopologyRefusals: what nats-server would refuse at start is an error
// of Render, before any server sees it.
func TestTopologyRefusals(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]func(c *Config){
		"leafnode account undefined": func(c *Config) { c.Leafnodes.Authorization.Account = "NOPE" },
		"remote account undefined":   func(c *Config) { c.Leafnodes.Remotes[0].Account = "NOPE" },
		"remote without URL":         func(c *Config) { c.Leafnodes.Remotes[0].URLs = nil },
		"gateway name differs":       func(c *Config) { c.Gateway.Name = "other" },
		"gateway without name":       func(c *Config) { c.Gateway.Name = ""; c.Cluster = nil },
		"gateway URLs literal":       func(c *Config) { c.Gateway.Gateways[0].URLs = String("nats://x:7222") },
		"gateway TLS without key":    func(c *Config) { c.Gateway.TLS.KeyFile = "" },
		"gateway, JetStream, no routes": func(c *Config) {
			c.Cluster = nil
			c.JetStream = &JetStream{StoreDir: "/data"}
		},
	}
	for name, breakIt := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := topologyConfig(t, dir)
			breakIt(cfg)
			if _, err := cfg.Render(); err == nil {
				t.Fatal("rendered")
			}
		})
	}
}

// TestTopologyIsNotPassthrough: spec.config still refuses the untyped
// keys, however spelled, now that the typed fields exist.
func TestTopologyIsNotPassthrough(t *testing.T) {
	for _, key := range []string{"leafnodes", "LeafNodes", "leaf", "gateway", "Gateway"} {
		cfg := &Config{Port: 4222, Extra: map[string]any{key: map[string]any{"port": 7422}}}
		if _, err := cfg.Render(); err == nil {
			t.Errorf("spec.config %q was accepted", key)
		}
	}
}
