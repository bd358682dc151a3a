package natsmon

import (
	"strings"
	"testing"
)

// The answers below have the shape nats-server 2.15 sends to the system
// account's direct account requests (STATZ with include_unused, JSZ).

// TestDecodeAccountStatz: the connections of the account asked about,
// not of another account the answer carries. Careless variant caught:
// summing every entry's conns.
func TestDecodeAccountStatz(t *testing.T) {
	answer := `{"server":{"name":"nats-0","id":"NABC"},"data":{"server_id":"NABC","now":"2026-12-04T06:00:00Z",
		"account_statz":[{"acc":"AOTHER","conns":7},{"acc":"AORDERS","name":"team-a/orders","conns":3,"leafnodes":0,"total_conns":3,
		"num_subscriptions":4,"sent":{"msgs":1,"bytes":2},"received":{"msgs":1,"bytes":2},"slow_consumers":0}]}}`
	conns, ok := decodeAccountStatz([]byte(answer), "AORDERS")
	if !ok || conns != 3 {
		t.Fatalf("conns %d, ok %v; want 3", conns, ok)
	}
	if _, ok := decodeAccountStatz([]byte(`{"data":{"account_statz":[]}}`), "AORDERS"); ok {
		t.Fatal("an answer without the account counted")
	}
	if _, ok := decodeAccountStatz([]byte(`{"data":{"account_statz":[{"acc":"AORDERS","conns":1}]}} trailing`), "AORDERS"); ok {
		t.Fatal("an answer with trailing bytes counted")
	}
}

// TestDecodeAccountInfo: JetStream's account info read as the operator's
// user of the account, and what a server the operator does not run might
// send instead. Careless variants caught: an error reply read as zero
// usage, a negative count written to status, an oversized body decoded,
// the error's text written unbounded (a control character kept).
func TestDecodeAccountInfo(t *testing.T) {
	u, err := decodeAccountInfo([]byte(`{"type":"io.nats.jetstream.api.v1.account_info_response","memory":10,"storage":65536,
		"reserved_memory":0,"reserved_storage":0,"streams":1,"consumers":2,"limits":{"max_storage":65536},"api":{"total":3,"errors":0}}`))
	if err != nil || *u != (AccountJetStream{Memory: 10, Storage: 65536, Streams: 1, Consumers: 2}) {
		t.Fatalf("%+v, %v", u, err)
	}
	for name, body := range map[string]string{
		"error reply":     `{"error":{"code":503,"err_code":10039,"description":"jetstream not enabled for account"}}`,
		"negative":        `{"memory":0,"storage":-1,"streams":0,"consumers":0}`,
		"not JSON":        `{"memory":`,
		"a string count":  `{"streams":"many"}`,
		"oversized":       `{"memory":0,"pad":"` + strings.Repeat("x", maxAccountInfo) + `"}`,
		"control in text": "{\"error\":{\"description\":\"bad\\u001b[2Jnews\"}}",
	} {
		u, err := decodeAccountInfo([]byte(body))
		if err == nil {
			t.Errorf("%s: read as %+v", name, u)
			continue
		}
		if strings.ContainsRune(err.Error(), 0x1b) {
			t.Errorf("%s: the server's text reached the error unshown: %q", name, err)
		}
	}
}
