package natsconf

import "strings"

// reloadableKeys are the top-level passthrough keys whose every change
// nats-server v2.15 applies on a config reload (SIGHUP).
//
// nats-server decides per Options field (diffOptions in server/reload.go):
// a changed field it has no reload handler for fails the whole reload, and
// the server keeps running on the old config with only a log line to show
// for it. So a key belongs here only when every Options field it can set is
// handled there. Keys left out on purpose, because some of their changes are
// refused: tls (the verify_and_map and rate_limit fields), leafnodes, mqtt,
// websocket, gateway, no_auth_user, max_subscriptions, max_pending,
// write_timeout, logfile_size_limit, log_max_num, prof_port and
// feature_flags. Owned keys are not listed: the operator decides for those.
var reloadableKeys = map[string]bool{
	// Logging: Debug, Trace, TraceVerbose, TraceHeaders, Logtime, LogtimeUTC,
	// LogFile, Syslog, RemoteSyslog.
	"debug":         true,
	"trace":         true,
	"trace_verbose": true,
	"trace_headers": true,
	"logtime":       true,
	"logtime_utc":   true,
	"logfile":       true,
	"log_file":      true,
	"syslog":        true,
	"remote_syslog": true,

	// Client limits and timers: MaxConn, MaxControlLine, MaxPayload,
	// PingInterval, MaxPingsOut, WriteDeadline, MaxTracedMsgLen.
	"max_connections":    true,
	"max_conn":           true,
	"max_control_line":   true,
	"max_payload":        true,
	"ping_interval":      true,
	"ping_max":           true,
	"write_deadline":     true,
	"max_traced_msg_len": true,

	// Server identity shown to clients and in statsz: ClientAdvertise, Tags,
	// Metadata.
	"client_advertise": true,
	"server_tags":      true,
	"server_metadata":  true,

	// Misc: PortsFileDir, DefaultSentinel, ConnectErrorReports,
	// ReconnectErrorReports, ProfBlockRate, NoFastProducerStall, OCSPConfig,
	// OCSPCacheConfig, Proxies (only its trusted keys exist).
	"ports_file_dir":          true,
	"default_sentinel":        true,
	"connect_error_reports":   true,
	"reconnect_error_reports": true,
	"prof_block_rate":         true,
	"no_fast_producer_stall":  true,
	"ocsp":                    true,
	"ocsp_cache":              true,
	"proxies":                 true,

	// Global account subject mappings land in Accounts, which is always
	// reloaded as a whole.
	"mappings": true,
	"maps":     true,
}

// Reloadable reports whether a change to the top-level passthrough key can be
// applied by a config reload (SIGHUP) rather than a restart. It is
// conservative: unknown keys, owned keys and keys only some of whose changes
// reload are reported as not reloadable. Letter case is ignored, as
// nats-server ignores it for top-level keys.
func Reloadable(key string) bool {
	return reloadableKeys[strings.ToLower(key)]
}
