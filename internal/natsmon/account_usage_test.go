package natsmon

import "testing"

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
