package natsconf

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// routesFor returns n route URLs of a StatefulSet named nats.
func routesFor(n int) []string {
	routes := make([]string, n)
	for i := range routes {
		routes[i] = fmt.Sprintf("nats://nats-%d.nats.default.svc:6222", i)
	}
	return routes
}

// appAndSysAccounts is the usual operator layout: an application account
// with JetStream and a system account.
func appAndSysAccounts() []Account {
	return []Account{
		{Name: "APP", JetStream: true, Users: []User{{User: Env("APP_USER"), Password: Env("APP_PASSWORD")}}},
		{Name: "SYS", Users: []User{{User: String("sys"), Password: Env("SYS_PASSWORD")}}},
	}
}

// TestRenderedConfigLoadsInNatsServer renders each variant, loads it with
// nats-server's full option processing in a pod-like environment, and checks
// that the server sees what the Config meant.
func TestRenderedConfigLoadsInNatsServer(t *testing.T) {
	variants := []struct {
		name  string
		cfg   Config
		check func(t *testing.T, opts *server.Options, raw map[string]any)
	}{
		{
			name: "single server",
			cfg:  Config{ServerName: Env("SERVER_NAME"), Port: 4222, HTTPPort: 8222},
			check: func(t *testing.T, opts *server.Options, _ map[string]any) {
				equal(t, "ServerName", opts.ServerName, "nats-1")
				equal(t, "Port", opts.Port, 4222)
				equal(t, "HTTPPort", opts.HTTPPort, 8222)
				equal(t, "JetStream", opts.JetStream, false)
				equal(t, "Cluster.Port", opts.Cluster.Port, 0)
			},
		},
		{
			name: "literal server name and pid file",
			cfg:  Config{ServerName: String("nats-standalone"), Port: 14222, PidFile: "/var/run/nats/nats.pid"},
			check: func(t *testing.T, opts *server.Options, _ map[string]any) {
				equal(t, "ServerName", opts.ServerName, "nats-standalone")
				equal(t, "Port", opts.Port, 14222)
				equal(t, "PidFile", opts.PidFile, "/var/run/nats/nats.pid")
			},
		},
		{
			name: "lame duck at the minimum with grace period",
			cfg:  Config{Port: 4222, LameDuckDuration: 30 * time.Second, LameDuckGracePeriod: 10 * time.Second},
			check: func(t *testing.T, opts *server.Options, _ map[string]any) {
				equal(t, "LameDuckDuration", opts.LameDuckDuration, 30*time.Second)
				equal(t, "LameDuckGracePeriod", opts.LameDuckGracePeriod, 10*time.Second)
			},
		},
		{
			name: "lame duck in minutes",
			// Would be the number 2000000 if written unquoted as 2m.
			cfg: Config{LameDuckDuration: 2*time.Minute + 30*time.Second, LameDuckGracePeriod: time.Minute},
			check: func(t *testing.T, opts *server.Options, _ map[string]any) {
				equal(t, "LameDuckDuration", opts.LameDuckDuration, 150*time.Second)
				equal(t, "LameDuckGracePeriod", opts.LameDuckGracePeriod, time.Minute)
			},
		},
		{
			name: "cluster with 3 routes",
			cfg: Config{
				ServerName: Env("SERVER_NAME"), Port: 4222,
				Cluster: &Cluster{Name: "nats", Port: 6222, NoAdvertise: true, Routes: routesFor(3)},
			},
			check: func(t *testing.T, opts *server.Options, _ map[string]any) {
				equal(t, "Cluster.Name", opts.Cluster.Name, "nats")
				equal(t, "Cluster.Port", opts.Cluster.Port, 6222)
				equal(t, "Cluster.NoAdvertise", opts.Cluster.NoAdvertise, true)
				if got := routeStrings(opts); !slices.Equal(got, routesFor(3)) {
					t.Errorf("Routes = %v, want %v", got, routesFor(3))
				}
			},
		},
		{
			name: "cluster with 5 routes",
			cfg:  Config{Cluster: &Cluster{Name: "prod-east", Port: 16222, Routes: routesFor(5)}},
			check: func(t *testing.T, opts *server.Options, _ map[string]any) {
				equal(t, "Cluster.Name", opts.Cluster.Name, "prod-east")
				equal(t, "Cluster.Port", opts.Cluster.Port, 16222)
				equal(t, "Cluster.NoAdvertise", opts.Cluster.NoAdvertise, false)
				equal(t, "len(Routes)", len(opts.Routes), 5)
				equal(t, "Routes[4]", opts.Routes[4].Host, "nats-4.nats.default.svc:6222")
			},
		},
		{
			name: "jetstream with store dir only",
			cfg:  Config{JetStream: &JetStream{StoreDir: "/data/jetstream"}},
			check: func(t *testing.T, opts *server.Options, _ map[string]any) {
				equal(t, "JetStream", opts.JetStream, true)
				equal(t, "StoreDir", opts.StoreDir, "/data/jetstream")
				equal(t, "JetStreamMaxStore", opts.JetStreamMaxStore, int64(0))
				equal(t, "JetStreamMaxMemory", opts.JetStreamMaxMemory, int64(0))
				equal(t, "JetStreamDomain", opts.JetStreamDomain, "")
			},
		},
		{
			name: "jetstream with sizes and domain",
			cfg: Config{JetStream: &JetStream{
				StoreDir: "/data", MaxFileStore: 10 << 30, MaxMemoryStore: 512 << 20, Domain: "hub",
			}},
			check: func(t *testing.T, opts *server.Options, _ map[string]any) {
				equal(t, "JetStream", opts.JetStream, true)
				equal(t, "JetStreamMaxStore", opts.JetStreamMaxStore, int64(10<<30))
				equal(t, "JetStreamMaxMemory", opts.JetStreamMaxMemory, int64(512<<20))
				equal(t, "JetStreamDomain", opts.JetStreamDomain, "hub")
			},
		},
		{
			name: "jetstream with nothing set is an empty block that enables it",
			cfg:  Config{Port: 4222, JetStream: &JetStream{}},
			check: func(t *testing.T, opts *server.Options, _ map[string]any) {
				equal(t, "JetStream", opts.JetStream, true)
				equal(t, "StoreDir", opts.StoreDir, "")
			},
		},
		{
			name: "token from the environment",
			cfg:  Config{Port: 4222, Authorization: &Authorization{Token: Env("NATS_TOKEN")}},
			check: func(t *testing.T, opts *server.Options, _ map[string]any) {
				equal(t, "Authorization", opts.Authorization, "t0kenAbC123xyz")
				equal(t, "len(Users)", len(opts.Users), 0)
			},
		},
		{
			name: "users in the global authorization block",
			cfg: Config{Authorization: &Authorization{Users: []User{
				{User: Env("ADMIN_USER"), Password: Env("ADMIN_PASSWORD")},
				{User: String("monitor"), Password: Env("MONITOR_PASSWORD")},
			}}},
			check: func(t *testing.T, opts *server.Options, _ map[string]any) {
				equal(t, "Authorization", opts.Authorization, "")
				expectUsers(t, opts, map[string]userEntry{
					"admin":   {password: "pAdmin0123"},
					"monitor": {password: "pMon111"},
				})
			},
		},
		{
			name: "accounts with jetstream, users and a system account",
			cfg: Config{
				ServerName: Env("SERVER_NAME"), JetStream: &JetStream{StoreDir: "/data"},
				Accounts: appAndSysAccounts(), SystemAccount: "SYS",
			},
			check: func(t *testing.T, opts *server.Options, raw map[string]any) {
				expectAccounts(t, opts, "APP", "SYS")
				equal(t, "SystemAccount", opts.SystemAccount, "SYS")
				expectUsers(t, opts, map[string]userEntry{
					"app": {password: "pApp4567", account: "APP"},
					"sys": {password: "pSys890", account: "SYS"},
				})
				// Options does not expose per-account JetStream; the parsed file does.
				equal(t, "accounts.APP.jetstream", lookup(t, raw, "accounts", "APP", "jetstream"), any("enabled"))
				if _, ok := lookup(t, raw, "accounts", "SYS").(map[string]any)["jetstream"]; ok {
					t.Error("SYS account has jetstream, want none")
				}
			},
		},
		{
			name: "global users next to account users",
			cfg: Config{
				Authorization: &Authorization{Users: []User{{User: Env("ADMIN_USER"), Password: Env("ADMIN_PASSWORD")}}},
				Accounts:      appAndSysAccounts(), SystemAccount: "SYS",
			},
			check: func(t *testing.T, opts *server.Options, _ map[string]any) {
				expectUsers(t, opts, map[string]userEntry{
					"admin": {password: "pAdmin0123"},
					"app":   {password: "pApp4567", account: "APP"},
					"sys":   {password: "pSys890", account: "SYS"},
				})
			},
		},
		{
			name: "account names that need quoting",
			cfg: Config{Accounts: []Account{
				{Name: "team-a", Users: []User{{User: String("a"), Password: Env("APP_PASSWORD")}}},
				{Name: "team.b c", JetStream: true},
			}},
			check: func(t *testing.T, opts *server.Options, _ map[string]any) {
				expectAccounts(t, opts, "team-a", "team.b c")
				expectUsers(t, opts, map[string]userEntry{"a": {password: "pApp4567", account: "team-a"}})
			},
		},
		{
			name: "extra scalars from JSON",
			cfg: Config{Port: 4222, Extra: map[string]any{
				"max_payload":     float64(8 << 20), // how encoding/json decodes every number
				"ping_max":        json.Number("3"),
				"max_connections": int64(1000),
				"max_pending":     int(64 << 20),
				"debug":           true,
				"logtime":         false,
				"ping_interval":   "20s",
			}},
			check: func(t *testing.T, opts *server.Options, _ map[string]any) {
				equal(t, "MaxPayload", opts.MaxPayload, int32(8<<20))
				equal(t, "MaxPingsOut", opts.MaxPingsOut, 3)
				equal(t, "MaxConn", opts.MaxConn, 1000)
				equal(t, "MaxPending", opts.MaxPending, int64(64<<20))
				equal(t, "Debug", opts.Debug, true)
				equal(t, "Logtime", opts.Logtime, false)
				equal(t, "PingInterval", opts.PingInterval, 20*time.Second)
			},
		},
		{
			name: "extra tags and metadata",
			cfg: Config{Extra: map[string]any{
				"server_tags":     []any{"az:eu-1a", "tier:gold"},
				"server_metadata": map[string]any{"team": "payments"},
			}},
			check: func(t *testing.T, opts *server.Options, _ map[string]any) {
				if !slices.Equal([]string(opts.Tags), []string{"az:eu-1a", "tier:gold"}) {
					t.Errorf("Tags = %v", opts.Tags)
				}
				equal(t, "Metadata[team]", opts.Metadata["team"], "payments")
			},
		},
		{
			name: "extra strings with quotes, backslashes and dollars",
			cfg: Config{Extra: map[string]any{
				"server_metadata": map[string]any{
					"app.kubernetes.io/name": "nats",
					"quote":                  `say "hi"`,
					"windows path":           `C:\data\`,
					"dollar":                 "$HOME and ${SERVER_NAME}",
					"comment chars":          "a#b // c",
					"multiline":              "line1\nline2\tend",
					"unicode":                "héllo ✓",
					"empty":                  "",
				},
			}},
			check: func(t *testing.T, opts *server.Options, _ map[string]any) {
				want := map[string]string{
					"app.kubernetes.io/name": "nats",
					"quote":                  `say "hi"`,
					"windows path":           `C:\data\`,
					"dollar":                 "$HOME and ${SERVER_NAME}",
					"comment chars":          "a#b // c",
					"multiline":              "line1\nline2\tend",
					"unicode":                "héllo ✓",
					"empty":                  "",
				}
				for k, v := range want {
					equal(t, "Metadata["+k+"]", opts.Metadata[k], v)
				}
				equal(t, "len(Metadata)", len(opts.Metadata), len(want))
			},
		},
		{
			name: "everything together",
			cfg: Config{
				ServerName: Env("SERVER_NAME"), Port: 4222, HTTPPort: 8222, PidFile: "/var/run/nats/nats.pid",
				LameDuckDuration: time.Minute, LameDuckGracePeriod: 5 * time.Second,
				Cluster:   &Cluster{Name: "nats", Port: 6222, NoAdvertise: true, Routes: routesFor(3)},
				JetStream: &JetStream{StoreDir: "/data", MaxFileStore: 1 << 30, Domain: "edge"},
				Accounts:  appAndSysAccounts(), SystemAccount: "SYS",
				Extra: map[string]any{"max_payload": float64(1 << 20), "server_tags": []any{"a"}},
			},
			check: func(t *testing.T, opts *server.Options, _ map[string]any) {
				equal(t, "ServerName", opts.ServerName, "nats-1")
				equal(t, "HTTPPort", opts.HTTPPort, 8222)
				equal(t, "LameDuckDuration", opts.LameDuckDuration, time.Minute)
				equal(t, "len(Routes)", len(opts.Routes), 3)
				equal(t, "JetStreamMaxStore", opts.JetStreamMaxStore, int64(1<<30))
				equal(t, "JetStreamDomain", opts.JetStreamDomain, "edge")
				equal(t, "SystemAccount", opts.SystemAccount, "SYS")
				equal(t, "MaxPayload", opts.MaxPayload, int32(1<<20))
				expectAccounts(t, opts, "APP", "SYS")
			},
		},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			opts, raw, data := renderAndLoad(t, &v.cfg)
			v.check(t, opts, raw)
			if t.Failed() {
				t.Logf("rendered:\n%s", data)
			}
		})
	}
}
