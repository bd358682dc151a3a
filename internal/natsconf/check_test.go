package natsconf

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	base := func() *Config {
		return &Config{
			ServerName: Env("SERVER_NAME"),
			Port:       4222,
			HTTPPort:   8222,
			Accounts: []Account{{Name: "APP", JetStream: true, Users: []User{
				{User: String("app"), Password: Env("NATS_PASSWORD")},
			}}},
			JetStream: &JetStream{StoreDir: t.TempDir()},
		}
	}
	for _, tc := range []struct {
		name    string
		extra   map[string]any
		wantErr string // empty: accepted
	}{
		{name: "no passthrough"},
		{name: "known key", extra: map[string]any{"max_payload": 2 << 20}},
		{name: "unknown key", extra: map[string]any{"max_paylod": 1}, wantErr: "max_paylod"},
		{name: "wrong type", extra: map[string]any{"max_connections": "many"}, wantErr: "max_connections"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			c.Extra = tc.extra
			err := c.Check()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Check() = %v, want nil", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Check() = %v, want an error naming %q", err, tc.wantErr)
			}
		})
	}
}
