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
		{"mappings", false}, // not a passthrough key
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
		{"max_subscriptions", float64(10), float64(20)},
		{"max_pending", float64(64 << 20), float64(32 << 20)},
		{"write_timeout", "close", "retry"},
		{"trace_verbose", false, true},
		{"trace_headers", false, true},
		{"logtime_utc", false, true},
		{"max_sub_tokens", float64(16), float64(32)},
		{"max_traced_msg_len", float64(100), float64(200)},
		{"max_closed_clients", float64(100), float64(200)},
		{"no_fast_producer_stall", false, true},
		{"connect_error_reports", float64(10), float64(20)},
		{"reconnect_error_reports", float64(10), float64(20)},
		{"disable_sublist_cache", false, true},
	}
	for _, key := range PassthroughKeys() {
		if !slices.ContainsFunc(cases, func(c struct {
			key           string
			before, after any
		}) bool {
			return c.key == key
		}) {
			t.Errorf("passthrough key %q has no reload case", key)
		}
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
