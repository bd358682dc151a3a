package natsconf

import (
	"slices"
	"strings"
)

// ownedKeys are the top-level keys Extra may not set. Three reasons put a key
// here:
//
//  1. Render writes it from a Config field. A second copy from Extra would
//     make the file say two things; nats-server would keep one of them
//     without a word.
//  2. nats-server treats it as an alias of such a key (pidfile = pid_file,
//     monitor_port = http_port, system = system_account, storedir =
//     store_dir). nats-server processes top-level keys in random map order, so
//     which of the two wins could even change from one start to the next.
//  3. It would silently break the operator while every pod still looks
//     healthy:
//     - listen, host, net move the client listener the Service and the route
//     URLs point at (listen also overrides port).
//     - http sets the monitoring host and port, https and https_port replace
//     plain HTTP monitoring (nats-server refuses both ports at once), and
//     http_base_path moves /healthz: all break the probes the operator
//     installs.
//     - no_system_account and its aliases undo system_account.
//
// Keys that fail loudly instead (operator, resolver, unknown keys, ...) are
// left to nats-server's own checks, which the operator runs on the rendered
// file.
var ownedKeys = []string{
	// Client listener.
	"port", "listen", "host", "net",
	// Monitoring listener.
	"http_port", "monitor_port", "http", "https", "https_port", "http_base_path",
	// Identity and process.
	"server_name", "pid_file", "pidfile",
	"lame_duck_duration", "lame_duck_grace_period",
	// Clustering and storage.
	"cluster", "jetstream", "store_dir", "storedir",
	// Authentication and accounts.
	"authorization", "accounts",
	"system_account", "system", "no_system_account", "no_system", "no_sys_acc",
}

// OwnedKeys lists the top-level nats.conf keys the operator owns, sorted.
// Config.Extra may not set any of them, in any letter case, because
// nats-server matches top-level keys case-insensitively.
func OwnedKeys() []string {
	keys := slices.Clone(ownedKeys)
	slices.Sort(keys)
	return keys
}

// isOwnedKey reports whether key, in any letter case, is owned.
func isOwnedKey(key string) bool {
	return slices.Contains(ownedKeys, strings.ToLower(key))
}
