package natsconf

import (
	"bytes"
	"testing"
)

// extraFromOrder builds the same nested passthrough map inserting keys in the
// given order, so two calls with different orders give equal maps whose
// internal layout differs.
func extraFromOrder(keys []string) map[string]any {
	values := map[string]any{
		"max_payload":     float64(1 << 20),
		"debug":           true,
		"server_tags":     []any{"b", "a"},
		"ping_interval":   "20s",
		"server_metadata": map[string]any{"z": "1", "a": "2", "m": "3", "q.r": "4"},
		"max_pending":     int64(1 << 20),
		"max_connections": int64(10),
	}
	extra := make(map[string]any, len(keys))
	for _, k := range keys {
		extra[k] = values[k]
	}
	return extra
}

func TestRenderIsDeterministic(t *testing.T) {
	order := []string{"max_payload", "debug", "server_tags", "ping_interval", "server_metadata", "max_pending", "max_connections"}
	reversed := make([]string, len(order))
	for i, k := range order {
		reversed[len(order)-1-i] = k
	}
	base := Config{ServerName: Env("SERVER_NAME"), Port: 4222, Accounts: appAndSysAccounts(), SystemAccount: "SYS"}

	first := base
	first.Extra = extraFromOrder(order)
	want, err := first.Render()
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	// Go randomises map iteration on every range, so repeated renders of the
	// same Config would differ if any map were walked unsorted.
	for i := range 50 {
		got, err := first.Render()
		if err != nil {
			t.Fatalf("Render %d: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("render %d differs:\n%s\nvs\n%s", i, got, want)
		}
	}

	second := base
	second.Extra = extraFromOrder(reversed)
	got, err := second.Render()
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("an equal Config built in another order renders differently:\n%s\nvs\n%s", got, want)
	}
}
