package natsconf

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestPassthroughKeysAreSortedCopies(t *testing.T) {
	keys := PassthroughKeys()
	if !slices.IsSorted(keys) {
		t.Errorf("PassthroughKeys not sorted: %v", keys)
	}
	keys[0] = "mutated"
	if slices.Contains(PassthroughKeys(), "mutated") {
		t.Error("PassthroughKeys exposes its backing array")
	}
	for _, k := range PassthroughKeys() {
		if k != strings.ToLower(k) || strings.ContainsFunc(k, func(r rune) bool { return r > 127 }) {
			t.Errorf("%q is not lower-case ASCII: admission and the operator would fold it differently", k)
		}
	}
}

// TestPassthroughRefusesWhatTheIssueNames holds every key the issue names,
// and every key Render writes from a Config field, off the allow-list, in
// the spellings a tenant might try.
func TestPassthroughRefusesWhatTheIssueNames(t *testing.T) {
	refused := []string{
		// Paths.
		"include", "operator", "operators", "resolver", "account_resolver", "resolver_tls",
		"log_file", "logfile", "pid_file", "pidfile", "ports_file_dir", "store_dir", "storedir",
		"ocsp_cache", "tls", "prof_port", "remote_syslog", "syslog",
		// Listeners and bridges.
		"leafnodes", "leaf", "gateway", "websocket", "ws", "mqtt", "listen", "host", "net",
		"port", "http", "http_port", "monitor_port", "https", "https_port", "http_base_path",
		"client_advertise", "proxy_protocol",
		// Authentication.
		"no_auth_user", "authorization", "accounts", "system_account", "system",
		"no_system_account", "no_sys_acc", "trusted", "trusted_keys", "default_sentinel",
		"proxies", "mappings", "default_js_domain",
		// Owned by the operator.
		"server_name", "cluster", "jetstream", "lame_duck_duration", "lame_duck_grace_period",
		// Folding: case folds, '-' does not (nats-server keeps it distinct), and a
		// non-ASCII rune strings.ToLower would fold onto an ASCII letter matches
		// nothing.
		"NO_AUTH_USER", "Operator", "max-payload", "max_sub_to\u212Aens", "\u0130nclude",
		// Aliases of allowed keys: one spelling per setting.
		"max_conn", "max_subs", "no_sublist_cache", "max_subscription_tokens",
		"", "unknown_key",
	}
	for _, k := range refused {
		if IsPassthroughKey(k) {
			t.Errorf("IsPassthroughKey(%q) = true", k)
		}
		_, err := (&Config{Extra: map[string]any{k: true}}).Render()
		if err == nil || !strings.Contains(err.Error(), "not an allowed passthrough setting") {
			t.Errorf("Render with extra %q: err = %v, want the allow-list refusal", k, err)
		}
	}
	for _, k := range []string{"max_payload", "MAX_PAYLOAD", "Debug", "server_tags"} {
		if !IsPassthroughKey(k) {
			t.Errorf("IsPassthroughKey(%q) = false", k)
		}
	}
}

func TestFoldKeyIsCELLowerASCII(t *testing.T) {
	for in, want := range map[string]string{
		"MAX_Payload":         "max_payload",
		"max-payload":         "max-payload",
		"max_sub_to\u212Aens": "max_sub_to\u212Aens",
		"\u0130nclude":        "\u0130nclude",
		"ÄB":                  "Äb",
	} {
		equal(t, "FoldKey("+in+")", FoldKey(in), want)
	}
}

// TestEveryPassthroughKeyIsUnderstoodByNatsServer: each listed key, with a
// value of its type, renders, passes the check and loads in nats-server,
// so the list holds no typo and no key of another version.
func TestEveryPassthroughKeyIsUnderstoodByNatsServer(t *testing.T) {
	values := passthroughSamples()
	for _, k := range PassthroughKeys() {
		v, ok := values[k]
		if !ok {
			t.Errorf("no sample value for passthrough key %q", k)
			continue
		}
		cfg := &Config{Port: 4222, Extra: map[string]any{k: v}}
		if err := cfg.Check(); err != nil {
			t.Errorf("%s: %v", k, err)
		}
		renderAndLoad(t, cfg)
	}
}

// passthroughSamples holds one valid value per passthrough key.
func passthroughSamples() map[string]any {
	return map[string]any{
		"debug": true, "trace": false, "trace_verbose": false, "trace_headers": true,
		"logtime": true, "logtime_utc": true,
		"max_connections": jsonNumber("1000"), "max_control_line": jsonNumber("8192"),
		"max_payload": jsonNumber("2097152"), "max_pending": jsonNumber("67108864"),
		"max_subscriptions": jsonNumber("1000"), "max_sub_tokens": jsonNumber("64"),
		"max_traced_msg_len": jsonNumber("1024"), "max_closed_clients": jsonNumber("100"),
		"ping_interval": "1m", "ping_max": jsonNumber("3"), "write_deadline": "5s",
		"write_timeout": "close", "no_fast_producer_stall": true,
		"connect_error_reports": jsonNumber("10"), "reconnect_error_reports": jsonNumber("5"),
		"disable_sublist_cache": false,
		"server_tags":           []any{"region:eu"},
		"server_metadata":       map[string]any{"team": "payments"},
	}
}

func TestReloadableKeysArePassthroughKeys(t *testing.T) {
	for k := range reloadableKeys {
		if !IsPassthroughKey(k) {
			t.Errorf("reloadable key %q is not a passthrough key", k)
		}
	}
}

// TestPassthroughKeysAreDocumented: docs/natscluster.md and the API doc
// reference moved) and the API doc comment list every allowed key, so users
// read the list the operator enforces.
func TestPassthroughKeysAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/natscluster.md")
	if err != nil {
		t.Fatal(err)
	}
	api, err := os.ReadFile("../../api/v1alpha1/natscluster_types.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range PassthroughKeys() {
		if !strings.Contains(string(doc), "`"+k+"`") {
			t.Errorf("docs/natscluster.md does not list %q", k)
		}
		if !regexp.MustCompile(`//.*\b` + k + `\b`).Match(api) {
			t.Errorf("the NatsClusterSpec.Config doc comment does not list %q", k)
		}
	}
}
