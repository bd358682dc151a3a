package natsconf

import "strings"

// reloadableKeys are the passthrough keys whose every change nats-server
// v2.15 applies on a config reload (SIGHUP).
//
// nats-server decides per Options field (diffOptions in server/reload.go):
// a changed field it has no reload handler for fails the whole reload, and
// the server keeps running on the old config with only a log line to show
// for it. So a key belongs here only when every Options field it can set is
// handled there. Passthrough keys left out on purpose, because some of
// their changes are refused: max_subscriptions, max_pending, write_timeout,
// max_sub_tokens and the rest TestReloadableAgreesWithNatsServer lists.
var reloadableKeys = map[string]bool{
	// Logging: Debug, Trace, TraceVerbose, TraceHeaders, Logtime, LogtimeUTC.
	"debug":         true,
	"trace":         true,
	"trace_verbose": true,
	"trace_headers": true,
	"logtime":       true,
	"logtime_utc":   true,

	// Client limits and timers: MaxConn, MaxControlLine, MaxPayload,
	// PingInterval, MaxPingsOut, WriteDeadline, MaxTracedMsgLen.
	"max_connections":    true,
	"max_control_line":   true,
	"max_payload":        true,
	"ping_interval":      true,
	"ping_max":           true,
	"write_deadline":     true,
	"max_traced_msg_len": true,

	// Server identity shown in statsz: Tags, Metadata.
	"server_tags":     true,
	"server_metadata": true,

	// Misc: ConnectErrorReports, ReconnectErrorReports, NoFastProducerStall.
	"connect_error_reports":   true,
	"reconnect_error_reports": true,
	"no_fast_producer_stall":  true,
}

// Reloadable reports whether a change to the top-level passthrough key can be
// applied by a config reload (SIGHUP) rather than a restart. It is
// conservative: keys off the passthrough list and keys only some of whose
// changes reload are reported as not reloadable. Letter case is ignored, as
// nats-server ignores it for top-level keys.
func Reloadable(key string) bool {
	return reloadableKeys[strings.ToLower(key)]
}
