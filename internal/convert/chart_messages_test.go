package convert

import (
	"strings"
	"testing"
)

// TestChartMessagesQuoteNoValue: every place the conversion names a
// setting of nats.conf it cannot carry, and every way nats.conf can fail
// to parse, names the setting (its key path) or the line, never what
// nats.conf holds there: the operator writes these messages into the
// tenant's status for a takeover, and the values are a ConfigMap's
// (passwords, tokens). Each value below holds the word VALUE. Careless
// variants: the messages as they were (cluster.name, store_dir and the
// certificate's file quoted, nats-server's parse errors passed on whole,
// which quote the text at the fault; watched failing).
func TestChartMessagesQuoteNoValue(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string // want: in the error or a loss
		leak             string // what would be quoted
	}{
		{"cluster name", "cluster { name: VALUE-name, port: 6222 }\n", "nats.conf cluster.name", "VALUE"},
		{"store dir", "jetstream { store_dir: /VALUE-dir }\n", "nats.conf jetstream.store_dir", "VALUE"},
		{"certificate file", `tls { cert_file: "/etc/nats-certs/client/VALUE.crt", key_file: "/etc/nats-certs/client/tls.key" }` + "\n", "nats.conf tls.cert_file", "VALUE"},
		{"integer out of range", "max_payload: 987654321987654321987654321\n", "nats.conf does not parse", "987654321"},
		{"a bad datetime", "logtime: 2024-01-01T99:98:97Z\n", "nats.conf does not parse", "99:98:97"},
		{"a bad escape", `write_deadline: "\xVQ"` + "\n", "nats.conf does not parse at line 9", "VQ"},
		{"unterminated string", "write_deadline: \"VALUE\n", "nats.conf does not parse", "VALUE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Chart(documents(t, minimalChart(t, minimalConf+tc.text, "")), "default")
			var said strings.Builder
			if err != nil {
				said.WriteString(err.Error() + "\n")
			}
			for _, l := range res.Lost {
				said.WriteString(l.String() + "\n")
			}
			if !strings.Contains(said.String(), tc.want) {
				t.Fatalf("said %q, want %q in it", said.String(), tc.want)
			}
			if strings.Contains(said.String(), tc.leak) {
				t.Errorf("a value of nats.conf is quoted:\n%s", said.String())
			}
		})
	}
}
