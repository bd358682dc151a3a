package natsconf

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// TestRenderRefusesUnsafeConfigs checks that every refusal is an error that
// names the culprit, and that no partial output is returned.
func TestRenderRefusesUnsafeConfigs(t *testing.T) {
	user := func(name, passwordVar string) User { return User{User: String(name), Password: Env(passwordVar)} }
	cases := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		// Keys off the allow-list (passthrough_test.go has the full list).
		{"owned key in extra", Config{Extra: map[string]any{"port": float64(4333)}}, `"port" is not an allowed passthrough setting`},
		{"owned key in another letter case", Config{Extra: map[string]any{"Server_Name": "x"}}, `"Server_Name"`},
		{"path key", Config{Extra: map[string]any{"operator": "/dev/zero"}}, `"operator" is not an allowed passthrough setting`},
		{"listener", Config{Extra: map[string]any{"leafnodes": map[string]any{"port": float64(7422)}}}, `"leafnodes"`},
		{"auth bypass", Config{Extra: map[string]any{"no_auth_user": "kubenats-system"}}, `"no_auth_user"`},
		{"extra keys equal but for case", Config{Extra: map[string]any{"debug": true, "DEBUG": false}}, `"DEBUG" and "debug"`},

		// Environment variable names.
		{"lower-case env name", Config{ServerName: Env("server_name")}, `"server_name"`},
		{"env name starting with a digit", Config{ServerName: Env("1NAME")}, `"1NAME"`},
		{"env name with a dash", Config{Authorization: &Authorization{Token: Env("NATS-TOKEN")}}, `"NATS-TOKEN"`},
		{"empty env name", Config{Authorization: &Authorization{Users: []User{{User: String("a"), Password: Env("")}}}}, "invalid environment variable name"},
		{"env name with a dollar", Config{Accounts: []Account{{Name: "A", Users: []User{{User: Env("$USER"), Password: Env("P")}}}}}, `"$USER"`},

		// Characters that cannot be written safely.
		{"NUL in pid file", Config{PidFile: "/run/nats\x00.pid"}, "control character U+0000"},
		{"carriage return in extra string", Config{Extra: map[string]any{"ping_interval": "a\rb"}}, "control character U+000D"},
		{"escape sequence nested in extra", Config{Extra: map[string]any{"server_metadata": map[string]any{"c": "\x1b[31m"}}}, "server_metadata.c"},
		{"control character in extra key", Config{Extra: map[string]any{"server_metadata": map[string]any{"a\x01b": "x"}}}, "control character U+0001"},
		{"double quote in extra key", Config{Extra: map[string]any{"server_metadata": map[string]any{`a"b`: "x"}}}, "double quote"},
		{"invalid UTF-8", Config{Cluster: &Cluster{Name: "c", Routes: []string{"nats://\xff:6222"}}}, "not valid UTF-8"},
		{"control character in account name", Config{Accounts: []Account{{Name: "A\nB"}}}, "control character U+000A"},

		// Authorization shape.
		{"token and users together", Config{Authorization: &Authorization{Token: Env("T"), Users: []User{user("a", "P")}}}, "not both"},
		{"empty authorization", Config{Authorization: &Authorization{}}, "set a token or users"},
		{"literal token", Config{Authorization: &Authorization{Token: String("s3cret")}}, "token must be an environment variable"},
		{"literal password", Config{Authorization: &Authorization{Users: []User{{User: String("a"), Password: String("s3cret")}}}}, "password must be an environment variable"},
		{"user without a name", Config{Accounts: []Account{{Name: "A", Users: []User{{Password: Env("P")}}}}}, "has no name"},
		{"token with account users", Config{Authorization: &Authorization{Token: Env("T")}, Accounts: []Account{{Name: "A", Users: []User{user("a", "P")}}}}, "token cannot be combined with account users"},
		{"duplicate user across blocks", Config{Authorization: &Authorization{Users: []User{user("a", "P")}}, Accounts: []Account{{Name: "A", Users: []User{user("a", "Q")}}}}, `user "a" is declared twice`},
		{"env var shadowed by an account", Config{Accounts: []Account{{Name: "APP_PASSWORD"}, {Name: "APP", Users: []User{user("a", "APP_PASSWORD")}}}}, "$APP_PASSWORD has the name of an account"},

		// Accounts.
		{"reserved global account", Config{Accounts: []Account{{Name: "$G"}}}, `"$G" is reserved`},
		{"duplicate account", Config{Accounts: []Account{{Name: "A"}, {Name: "A"}}}, `"A" is declared twice`},
		{"account without a name", Config{Accounts: []Account{{}}}, "empty name"},

		// Values nats-server refuses at load time.
		{"lame duck below 30s", Config{LameDuckDuration: 10 * time.Second}, "minimum of 30s"},
		{"negative grace period", Config{LameDuckGracePeriod: -time.Second}, "negative"},
		{"server name with a space", Config{ServerName: String("my server")}, "contains a space"},
		{"cluster name with a space", Config{Cluster: &Cluster{Name: "my cluster"}}, "contains a space"},
		{"reserved cluster name", Config{Cluster: &Cluster{Name: "_"}}, "reserved"},
		{"empty route", Config{Cluster: &Cluster{Name: "c", Routes: []string{""}}}, "route 0 is empty"},
		{"port out of range", Config{HTTPPort: 70000}, "http_port 70000"},
		{"negative jetstream size", Config{JetStream: &JetStream{MaxFileStore: -1}}, "negative"},

		// Extra types.
		{"struct in extra", Config{Extra: map[string]any{"debug": struct{}{}}}, "unsupported value type struct {}"},
		{"float32 in extra", Config{Extra: map[string]any{"max_payload": float32(1)}}, "unsupported value type float32"},
		{"typed slice in extra", Config{Extra: map[string]any{"server_tags": []string{"a"}}}, "unsupported value type []string"},
		{"typed map in extra", Config{Extra: map[string]any{"server_metadata": map[string]string{"a": "b"}}}, "unsupported value type map[string]string"},
		{"null in extra", Config{Extra: map[string]any{"debug": nil}}, "null has no nats.conf form"},
		{"NaN in extra", Config{Extra: map[string]any{"max_payload": math.NaN()}}, "no nats.conf form"},
		{"huge whole number", Config{Extra: map[string]any{"max_payload": 1e20}}, "64-bit"},
		{"invalid json.Number", Config{Extra: map[string]any{"max_payload": json.Number("12abc")}}, `invalid number "12abc"`},
		{"bad value inside an array", Config{Extra: map[string]any{"server_tags": []any{"a", int32(2)}}}, "server_tags[1]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.cfg.Render()
			if err == nil {
				t.Fatalf("Render succeeded, want error containing %q; output:\n%s", tc.wantErr, out)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not contain %q", err, tc.wantErr)
			}
			if out != nil {
				t.Errorf("Render returned output with an error:\n%s", out)
			}
		})
	}
}
