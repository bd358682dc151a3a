package natsconf

import (
	"slices"
	"strings"
)

// passthroughKeys are the only top-level keys Config.Extra may set. It is an
// allow-list, and short on purpose: spec.config is tenant input, and a key
// belongs here only when nothing it can say opens a file, a listener or a
// connection, changes who may connect, or moves something the operator
// relies on. Each was read in nats-server v2.15's option processing
// (processConfigFileLine in server/opts.go).
//
// Left out, and why (each waits for a typed field if users need it):
//
//   - Set by the operator: port, listen, host, net, http*, https*,
//     server_name, pid_file, lame_duck_*, cluster, jetstream, store_dir,
//     authorization, accounts, system_account, no_system_account.
//   - Paths, read or written by the server (or by the operator's check):
//     include (a directive, never a key), log_file, ports_file_dir,
//     operator, resolver, resolver_tls, ocsp_cache, tls.
//   - Listeners and bridges: leafnodes, gateway, websocket, mqtt,
//     prof_port, remote_syslog, syslog, proxy_protocol.
//   - Authentication and routing of identities: no_auth_user,
//     default_sentinel, trusted, trusted_keys, proxies, mappings,
//     default_js_domain, client_advertise (it tells clients, the operator
//     among them, where to reconnect), no_header_support (JetStream needs
//     headers), feature_flags.
//
// Only one spelling of each setting is listed (max_connections, not its
// alias max_conn): two aliases in one file set one option, and nats-server
// keeps whichever its map iteration meets last.
var passthroughKeys = []string{
	// Logging to standard error.
	"debug", "trace", "trace_verbose", "trace_headers", "logtime", "logtime_utc",
	// Client limits.
	"max_connections", "max_control_line", "max_payload", "max_pending",
	"max_subscriptions", "max_sub_tokens", "max_traced_msg_len", "max_closed_clients",
	// Client timers and slow-consumer handling.
	"ping_interval", "ping_max", "write_deadline", "write_timeout", "no_fast_producer_stall",
	// Error reporting and internals.
	"connect_error_reports", "reconnect_error_reports", "disable_sublist_cache",
	// Identity for JetStream placement and monitoring.
	"server_tags", "server_metadata",
}

// PassthroughKeys lists, sorted, the top-level nats.conf keys Config.Extra
// (a NatsCluster's spec.config) may set. The admission policy is generated
// from it, so admission and the operator cannot disagree.
func PassthroughKeys() []string {
	keys := slices.Clone(passthroughKeys)
	slices.Sort(keys)
	return keys
}

// IsPassthroughKey reports whether key, folded as FoldKey folds it, is on
// the allow-list.
func IsPassthroughKey(key string) bool {
	return slices.Contains(passthroughKeys, FoldKey(key))
}

// FoldKey folds a top-level key the way the admission policy does (CEL's
// lowerAscii): ASCII letters to lower case, every other rune unchanged.
//
// nats-server itself folds top-level keys with strings.ToLower and nothing
// else: '-' and '_' stay distinct ("max-payload" is an unknown key to it,
// not max_payload), so they stay distinct here. strings.ToLower also folds
// a few non-ASCII runes onto ASCII letters (U+212A KELVIN SIGN to 'k',
// U+0130 to 'i'); ASCII folding does not, so such a key matches no listed
// key, which are all ASCII, and is refused by both the operator and
// admission instead of slipping through as an alias.
func FoldKey(key string) string {
	b := []byte(key)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// isDirectiveKey reports whether a bare key would be read as nats.conf's
// include directive when followed by a space (as in `key {`). The lexer
// lowers keys with strings.ToLower before it compares, so this does too.
func isDirectiveKey(key string) bool {
	return strings.ToLower(key) == "include"
}
