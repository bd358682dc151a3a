package natsconf

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

func jsonNumber(s string) json.Number { return json.Number(s) }

func TestReloadable(t *testing.T) {
	cases := []struct {
		key  string
		want bool
	}{
		{"max_payload", true},
		{"MAX_PAYLOAD", true},
		{"debug", true},
		{"server_tags", true},
		{"mappings", true},
		{"tls", false},
		{"leafnodes", false},
		{"websocket", false},
		{"max_subscriptions", false},
		{"write_timeout", false},
		{"port", false},
		{"no_such_key", false},
		{"", false},
	}
	for _, tc := range cases {
		equal(t, "Reloadable("+tc.key+")", Reloadable(tc.key), tc.want)
	}
}

// TestReloadableAgreesWithNatsServer asks nats-server itself, through
// server.CheckReload, whether a change to each key can be reloaded, and
// checks Reloadable gives the same answer.
func TestReloadableAgreesWithNatsServer(t *testing.T) {
	cases := []struct {
		key           string
		before, after any
	}{
		{"max_payload", float64(1 << 20), float64(2 << 20)},
		{"debug", false, true},
		{"trace", false, true},
		{"logtime", true, false},
		{"max_connections", float64(100), float64(200)},
		{"ping_interval", "20s", "30s"},
		{"ping_max", float64(2), float64(3)},
		{"write_deadline", "5s", "10s"},
		{"max_control_line", float64(4096), float64(8192)},
		{"server_tags", []any{"a"}, []any{"b"}},
		{"server_metadata", map[string]any{"a": "x"}, map[string]any{"a": "y"}},
		{"mappings", map[string]any{"foo": "bar"}, map[string]any{"foo": "baz"}},
		{"client_advertise", "a.example:4222", "b.example:4222"},
		{"max_subscriptions", float64(10), float64(20)},
		{"max_pending", float64(64 << 20), float64(32 << 20)},
		{"write_timeout", "close", "retry"},
		{"prof_port", float64(6060), float64(6061)},
		{"websocket", map[string]any{"port": float64(8080), "no_tls": true}, map[string]any{"port": float64(8081), "no_tls": true}},
		{"leafnodes", map[string]any{"port": float64(7422)}, map[string]any{"port": float64(7423)}},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			before, _, _ := renderAndLoad(t, &Config{Port: 4222, Extra: map[string]any{tc.key: tc.before}})
			after, _, _ := renderAndLoad(t, &Config{Port: 4222, Extra: map[string]any{tc.key: tc.after}})
			err := server.CheckReload(before, after)
			if err != nil && !errors.Is(err, server.ErrConfigReloadNotSupported) {
				t.Fatalf("CheckReload failed for another reason: %v", err)
			}
			serverSays := err == nil
			equal(t, "Reloadable("+tc.key+") vs nats-server", Reloadable(tc.key), serverSays)
		})
	}
}

func TestOwnedKeys(t *testing.T) {
	keys := OwnedKeys()
	for _, required := range []string{
		"port", "http_port", "server_name", "cluster", "jetstream",
		"authorization", "accounts", "system_account", "pid_file",
	} {
		if !slices.Contains(keys, required) {
			t.Errorf("OwnedKeys lacks %q", required)
		}
	}
	if !slices.IsSorted(keys) {
		t.Errorf("OwnedKeys not sorted: %v", keys)
	}
	keys[0] = "mutated"
	if slices.Contains(OwnedKeys(), "mutated") {
		t.Error("OwnedKeys exposes its backing array")
	}
	for _, key := range OwnedKeys() {
		if Reloadable(key) {
			t.Errorf("owned key %q is also listed as reloadable passthrough", key)
		}
	}
}

// TestOwnedKeysAreAllRendered guards against a typo in the owned list: every
// Config-backed key Render writes must be owned.
func TestOwnedKeysAreAllRendered(t *testing.T) {
	for _, key := range []string{"server_name", "port", "http_port", "pid_file", "lame_duck_duration",
		"lame_duck_grace_period", "cluster", "jetstream", "authorization", "accounts", "system_account"} {
		if !isOwnedKey(key) {
			t.Errorf("Render writes %q but it is not owned", key)
		}
	}
}
