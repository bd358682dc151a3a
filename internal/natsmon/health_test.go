package natsmon

import (
	"net/http"
	"strings"
	"testing"
)

// The bodies are nats-server 2.15.3's answers to /healthz?details=true
// (server/monitor.go's HealthStatus), as a frozen and resumed follower
// gives them while it catches up.
func TestDecodeOwnView(t *testing.T) {
	long := strings.Repeat("S", 300)
	for _, tc := range []struct {
		name string
		code int
		body string
		want string // "" means current
		err  string
	}{
		{"current", http.StatusOK, `{"status":"ok","status_code":200}`, "", ""},
		{"a stream catching up", http.StatusServiceUnavailable,
			`{"status":"error","status_code":503,"errors":[{"type":"STREAM","account":"APP","stream":"UPGRADE","error":"JetStream stream 'APP > UPGRADE' is not current: stream catching up"}]}`,
			"stream UPGRADE is not current (stream catching up)", ""},
		{"a consumer, then more: the first is named", http.StatusServiceUnavailable,
			`{"status":"error","status_code":503,"errors":[{"type":"CONSUMER","account":"APP","stream":"UPGRADE","consumer":"WORKERS","error":"JetStream consumer 'APP > UPGRADE > WORKERS' is not current: group node unhealthy"},{"type":"STREAM","stream":"B","error":"x"}]}`,
			"consumer WORKERS of stream UPGRADE is not current (group node unhealthy)", ""},
		{"the meta group", http.StatusServiceUnavailable,
			`{"status":"error","status_code":503,"errors":[{"type":"JETSTREAM","error":"JetStream is not current with the meta leader"}]}`,
			"JetStream is not current with the meta leader", ""},
		{"without details", http.StatusServiceUnavailable,
			`{"status":"unavailable","status_code":503,"error":"JetStream is not current with the meta leader"}`,
			"JetStream is not current with the meta leader", ""},
		// A 200 that lists a problem, or a 503 that says ok, is not current:
		// only a clean answer is.
		{"a 200 with an error is not current", http.StatusOK,
			`{"status":"ok","errors":[{"type":"STREAM","stream":"X","error":"JetStream stream 'A > X' is not current: stream not found"}]}`,
			"stream X is not current (stream not found)", ""},
		{"ok with a 503 is not current", http.StatusServiceUnavailable, `{"status":"ok"}`, "its /healthz answered 503 (ok)", ""},
		{"hostile names are shown, not carried", http.StatusServiceUnavailable,
			`{"status":"error","errors":[{"type":"STREAM","stream":"a\"b\nc","error":"x: \u0007bell"}]}`,
			"stream a?b?c is not current (?bell)", ""},
		{"a long name is cut, not refused", http.StatusServiceUnavailable,
			`{"status":"error","errors":[{"type":"STREAM","stream":"` + long[:255] + `","error":"JetStream stream 'APP > ` + long + `' is not current: stream catching up"}]}`,
			"stream " + long[:64] + "... is not current (stream catching up)", ""},
		{"not JSON", http.StatusOK, `ok`, "", "/healthz"},
		{"nested past the depth limit", http.StatusOK, `{"x":` + strings.Repeat("[", 100), "", "/healthz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeOwnView(strings.NewReader(tc.body), tc.code)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("DecodeOwnView = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
