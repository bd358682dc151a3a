package natsconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/conf"
)

// usersMarkVar is how the operator's users mark reaches server_metadata: a
// variable users.conf defines, which nats.conf includes first.
const usersMarkVar = "KUBENATS_USERS_REVISION"

// markedConfig is a config carrying the operator's marks as render writes
// them, with the user's server_metadata.
func markedConfig(user map[string]any) *Config {
	return &Config{
		Include: "users.conf",
		Metadata: map[string]Value{
			"kubenats.io/config": String("rev1"),
			"kubenats.io/users":  Env(usersMarkVar),
		},
		Extra: map[string]any{"server_metadata": user},
	}
}

// loadWithUsers renders cfg beside a users.conf that sets the users mark
// to "real", and returns server_metadata as nats-server's parser reads it.
func loadWithUsers(t *testing.T, cfg *Config) map[string]any {
	t.Helper()
	data, err := cfg.Render()
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	path := writeConf(t, data)
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "users.conf"), []byte(usersMarkVar+": \"real\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	raw, err := conf.ParseFile(path)
	if err != nil {
		t.Fatalf("conf.ParseFile: %v\n%s", err, data)
	}
	return lookup(t, raw, "server_metadata").(map[string]any)
}

// TestMetadataKeysShadowVariables shows the shadowing that
// reservedMetadataKey closes: nats-server resolves $NAME against the keys
// of the enclosing block before the top level, where the included
// users.conf put it, so a sibling key of the mark's variable name decides
// the mark.
func TestMetadataKeysShadowVariables(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "users.conf"), []byte(usersMarkVar+": \"real\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	text := "include \"users.conf\"\nserver_metadata {\n  " + usersMarkVar + ": \"forged\"\n  \"kubenats.io/users\": $" + usersMarkVar + "\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "nats.conf"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	raw, err := conf.ParseFile(filepath.Join(dir, "nats.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if got := lookup(t, raw, "server_metadata", "kubenats.io/users"); got != "forged" {
		t.Fatalf("the mark reads %v: nats-server no longer lets a sibling key shadow a variable, and this test's premise is gone", got)
	}
}

// TestUserMetadataCannotShadowMarks: a user's server_metadata key that
// could stand for one of the operator's marks is refused with a message
// naming it; other keys render beside the marks, which keep the values
// the operator wrote.
//
// Careless variant caught: today's main refused only a user key equal to
// a mark's key, so KUBENATS_USERS_REVISION rendered and the users mark
// read "forged" (and kubenats.io/ keys of marks the operator did not
// write in that mode were accepted).
func TestUserMetadataCannotShadowMarks(t *testing.T) {
	for _, key := range []string{"kubenats.io/users", "kubenats.io/config", usersMarkVar, "Kubenats.io/future", "KUBENATS_OTHER", "kubenatsx"} {
		_, err := markedConfig(map[string]any{key: "forged"}).Render()
		if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "kubenats") {
			t.Errorf("user key %q: Render error %v, want a refusal naming the key", key, err)
		}
	}
	// A variable of another name than the prefix is shadowed alike.
	cfg := markedConfig(map[string]any{"OTHER_VAR": "forged"})
	cfg.Metadata["kubenats.io/other"] = Env("OTHER_VAR")
	if _, err := cfg.Render(); err == nil || !strings.Contains(err.Error(), "variable") {
		t.Errorf("a user key named like a mark's variable: Render error %v", err)
	}

	md := loadWithUsers(t, markedConfig(map[string]any{"team": "payments", "nats.io/az": "1"}))
	for k, want := range map[string]string{"kubenats.io/users": "real", "kubenats.io/config": "rev1", "team": "payments", "nats.io/az": "1"} {
		if md[k] != want {
			t.Errorf("server_metadata %s = %v, want %q (all: %v)", k, md[k], want, md)
		}
	}
}
