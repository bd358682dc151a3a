package render_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// loadPodConfig writes nats.conf and users.conf side by side, as the pod's
// projected volume holds them, and loads them with nats-server's own option
// processing, the same a start or a reload runs.
func loadPodConfig(t *testing.T, c *v1alpha1.NatsCluster, cred render.Credentials) *server.Options {
	t.Helper()
	dir := t.TempDir()
	users, _, err := render.UsersConf(c.WithDefaults(), cred)
	if err != nil {
		t.Fatal(err)
	}
	conf := strings.ReplaceAll(configText(t, c), render.TLSDir+"/", writeTestCertificates(t)+"/")
	for name, text := range map[string]string{render.ConfigKey: conf, render.UsersConfKey: users} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(render.EnvServerName, "demo-0")
	t.Setenv(render.EnvZoneTag, `"zone:`+madeUpZone+`"`)
	t.Setenv(render.EnvRegionTag, `"region:`+madeUpRegion+`"`)
	opts, err := server.ProcessConfigFile(filepath.Join(dir, render.ConfigKey))
	if err != nil {
		t.Fatalf("nats-server refuses the pod's config: %v", err)
	}
	return opts
}

func userPassword(opts *server.Options, user string) (string, bool) {
	for _, u := range opts.Users {
		if u.Username == user {
			return u.Password, true
		}
	}
	return "", false
}

// TestUsersConfGivesThePasswordsAsWritten: the passwords reach the server
// from users.conf exactly as the Secrets hold them, characters the conf
// lexer treats specially included, and the server reports both revisions.
func TestUsersConfGivesThePasswordsAsWritten(t *testing.T) {
	c := cluster(withReplicas(1))
	for _, client := range []string{"plain", `qu"ote\back`, "$HOME", "a #comment", "include /dev/zero", "1234", "true", "a, b"} {
		t.Run(client, func(t *testing.T) {
			cred := render.Credentials{Client: client, System: "systemSecret"}
			opts := loadPodConfig(t, c, cred)
			if got, _ := userPassword(opts, "nats"); got != client {
				t.Errorf("app user password %q, want %q", got, client)
			}
			if got, _ := userPassword(opts, render.SystemUser); got != cred.System {
				t.Errorf("system user password %q, want %q", got, cred.System)
			}
			conf, err := render.Conf(c)
			if err != nil {
				t.Fatal(err)
			}
			_, usersRev, _ := render.UsersConf(c.WithDefaults(), cred)
			if got := opts.Metadata[render.MetadataConfigKey]; got != conf.Revision || got == "" {
				t.Errorf("metadata %s = %q, want %q", render.MetadataConfigKey, got, conf.Revision)
			}
			if got := opts.Metadata[render.MetadataUsersKey]; got != usersRev || got == "" {
				t.Errorf("metadata %s = %q, want %q", render.MetadataUsersKey, got, usersRev)
			}
		})
	}
}

// TestUsersRevision: the users.conf revision follows its content, and says
// nothing of the passwords: it is not their hash, and the same client
// password with another system password gives another revision.
func TestUsersRevision(t *testing.T) {
	c := cluster().WithDefaults()
	rev := func(client, system string) string {
		_, r, err := render.UsersConf(c, render.Credentials{Client: client, System: system})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a := rev("one", "sys")
	if a != rev("one", "sys") {
		t.Error("the revision is not stable for the same content")
	}
	if a == rev("two", "sys") {
		t.Error("a rotated client password keeps the revision")
	}
	if rev("one", "sysA") == rev("one", "sysB") {
		t.Error("the revision does not depend on the system password's key")
	}
	text, _, _ := render.UsersConf(c, render.Credentials{Client: "one", System: "sys"})
	if !strings.Contains(text, render.EnvUsersRevision) {
		t.Errorf("users.conf carries no revision:\n%s", text)
	}
}

// TestUsersConfRefusesControlCharacters without quoting the value.
func TestUsersConfRefusesControlCharacters(t *testing.T) {
	_, _, err := render.UsersConf(cluster().WithDefaults(), render.Credentials{Client: "bell\a-secretword", System: "s"})
	if err == nil {
		t.Fatal("a control character was accepted")
	}
	if strings.Contains(err.Error(), "secretword") {
		t.Errorf("the error quotes the value: %v", err)
	}
}

// TestConfigRevisionFollowsTheText: a reloadable change (max_payload) keeps
// the restart hash and changes the revision the servers report; a restart
// change changes both.
func TestConfigRevisionFollowsTheText(t *testing.T) {
	conf := func(c *v1alpha1.NatsCluster) render.RenderedConf {
		out, err := render.Conf(c)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	base := conf(cluster())
	reload := conf(cluster(withConfig("max_payload", "2097152")))
	restart := conf(cluster(withConfig("max_pending", "33554432")))
	if reload.RestartHash != base.RestartHash || reload.Revision == base.Revision {
		t.Errorf("reloadable change: restart hash %s -> %s, revision %s -> %s", base.RestartHash, reload.RestartHash, base.Revision, reload.Revision)
	}
	if restart.RestartHash == base.RestartHash || restart.Revision == base.Revision {
		t.Errorf("restart change: restart hash %s -> %s, revision %s -> %s", base.RestartHash, restart.RestartHash, base.Revision, restart.Revision)
	}
	if !strings.Contains(base.Text, base.Revision) {
		t.Errorf("nats.conf does not carry its revision %s", base.Revision)
	}
	// Without a system user nothing can reload the servers: every change
	// restarts them.
	token := conf(cluster(withAuthMode(v1alpha1.AuthToken)))
	tokenReload := conf(cluster(withAuthMode(v1alpha1.AuthToken), withConfig("max_payload", "2097152")))
	if token.RestartHash == tokenReload.RestartHash {
		t.Error("mode token: a reloadable change keeps the restart hash, but nothing would reload the servers")
	}
}

// TestUserMetadataMergesWithTheOperators: the user's server_metadata stays,
// beside the operator's marks; the operator's keys cannot be taken.
func TestUserMetadataMergesWithTheOperators(t *testing.T) {
	c := cluster(withReplicas(1), withConfig("server_metadata", `{"team":"a"}`))
	opts := loadPodConfig(t, c, render.Credentials{Client: "c", System: "s"})
	if opts.Metadata["team"] != "a" || opts.Metadata[render.MetadataConfigKey] == "" {
		t.Errorf("metadata %v: want the user's team and the operator's revision", opts.Metadata)
	}
	if _, err := render.Conf(cluster(withConfig("server_metadata", `{"kubenats.io/config":"x"}`))); err == nil {
		t.Error("a user's server_metadata took the operator's key")
	}
}
