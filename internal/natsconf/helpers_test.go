package natsconf

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats-server/v2/conf"
	"github.com/nats-io/nats-server/v2/server"
)

// podEnv is the environment a server pod has in these tests: the variables
// the rendered files reference. Token values start with a letter, as the
// operator generates them (see TestEnvValueIsLexedAsConfig for why).
var podEnv = map[string]string{
	"SERVER_NAME":      "nats-1",
	"NATS_TOKEN":       "t0kenAbC123xyz",
	"ADMIN_USER":       "admin",
	"ADMIN_PASSWORD":   "pAdmin0123",
	"APP_USER":         "app",
	"APP_PASSWORD":     "pApp4567",
	"SYS_PASSWORD":     "pSys890",
	"MONITOR_PASSWORD": "pMon111",
}

// setPodEnv sets podEnv for the duration of the test.
func setPodEnv(t *testing.T) {
	t.Helper()
	for name, value := range podEnv {
		t.Setenv(name, value)
	}
}

// writeConf writes data to a nats.conf in a fresh temp dir and returns its path.
func writeConf(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// renderAndLoad renders cfg and loads it the way nats-server does at start:
// the full option processing of server.ProcessConfigFile. It also returns the
// raw parsed map for checks the Options struct does not expose, and the text.
func renderAndLoad(t *testing.T, cfg *Config) (*server.Options, map[string]any, []byte) {
	t.Helper()
	setPodEnv(t)
	data, err := cfg.Render()
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	path := writeConf(t, data)
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server rejected the rendered file: %v\n%s", err, data)
	}
	raw, err := conf.ParseFile(path)
	if err != nil {
		t.Fatalf("conf.ParseFile: %v", err)
	}
	return opts, raw, data
}

// lookup walks nested maps of a parsed config by key path.
func lookup(t *testing.T, m map[string]any, path ...string) any {
	t.Helper()
	var current any = m
	for _, key := range path {
		asMap, ok := current.(map[string]any)
		if !ok {
			t.Fatalf("lookup %v: %q is under a %T, not a map", path, key, current)
		}
		current, ok = asMap[key]
		if !ok {
			t.Fatalf("lookup %v: key %q missing", path, key)
		}
	}
	return current
}
