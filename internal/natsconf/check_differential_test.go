package natsconf

import (
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// serverLoads runs nats-server's own option processing, the one it runs at
// start, on text as CheckRendered reads it (ForServer). Only texts that
// CheckRendered accepted come here: they have no include directive and no
// option that reads a file, so this reads nothing either.
func serverLoads(text []byte) error {
	return (&server.Options{}).ProcessConfigString(string(ForServer(text)))
}

// assertNoKinderThanTheServer fails when CheckRendered accepts text that
// nats-server's option processing refuses: the operator would ship a file
// that stops every server at start.
func assertNoKinderThanTheServer(t *testing.T, text []byte) {
	t.Helper()
	if CheckRendered(text) != nil {
		return
	}
	if err := serverLoads(text); err != nil {
		t.Fatalf("CheckRendered accepted what nats-server refuses (%v):\n%s", err, text)
	}
}

// TestCheckRenderedIsNoKinderThanTheServer: texts near the edge of each
// rule, both ways. The rules may refuse more than the server; never less.
func TestCheckRenderedIsNoKinderThanTheServer(t *testing.T) {
	for _, text := range differentialSeeds {
		t.Run(strings.SplitN(text, "\n", 2)[0], func(t *testing.T) {
			assertNoKinderThanTheServer(t, []byte(text))
		})
	}
}

// TestCheckRenderedAcceptsWhatRenderWrites: the check is not so strict
// that it refuses the operator's own files (render_variants_test.go and
// the render package check every variant; these are the edges).
func TestCheckRenderedAcceptsWhatRenderWrites(t *testing.T) {
	for _, text := range renderedSeeds {
		if err := CheckRendered([]byte(text)); err != nil {
			t.Errorf("CheckRendered refused %q: %v", text, err)
			continue
		}
		if err := serverLoads([]byte(text)); err != nil {
			t.Errorf("nats-server refuses %q: %v", text, err)
		}
	}
}

// differentialSeeds are texts at the edges of the rules, for the test
// above and the fuzz target.
var differentialSeeds = []string{
	"port: 4222\n",
	"",
	"# only a comment\n",
	"max_paylod: 1\n",
	"max_connections: \"many\"\n",
	"max_payload: 2147483648\n",
	"max_payload: 1.5\n",
	"max_payload: 1k\n",
	"max_sub_tokens: 0\n",
	"max_sub_tokens: 256\n",
	"ping_interval: 60\n",
	"ping_interval: \"2x\"\n",
	"write_timeout: \"sometimes\"\n",
	"debug: \"true\"\n",
	"debug: yes\n",
	"DEBUG: true, debug: false\n",
	"server_name: \"a b\"\n",
	"lame_duck_duration: \"10s\"\n",
	"lame_duck_grace_period: \"-1s\"\n",
	"port: 70000\n",
	"server_tags: \"a\"\n",
	"server_tags: [1]\n",
	"server_metadata { a: 1 }\n",
	"server_metadata: \"x\"\n",
	"cluster { name: \"_\" }\n",
	"cluster { name: a b }\n",
	"cluster { routes: [\"nats://a:1\", \"nats://a:1\"] }\n",
	"cluster { routes: [\"nats://[::1\"] }\n",
	"cluster { tls { cert_file: \"/dev/zero\" } }\n",
	"cluster { authorization { user: a, password: b, token: c } }\n",
	"cluster { pool_size: 3 }\n",
	"jetstream { store_dir: \"/a\", STORE_DIR: \"/b\" }\n",
	"jetstream { max_file_store: \"1G\" }\n",
	"jetstream { max_file_store: -1 }\n",
	"jetstream: enabled\n",
	"authorization { token: a, users: [{user: b, password: c}] }\n",
	"authorization { users: [{user: a, password: b}, {user: a, password: c}] }\n",
	"authorization { users: [{password: b}] }\n",
	"authorization { token: a }\naccounts { A { users: [{user: b, password: c}] } }\n",
	"authorization { users: [{user: a, password: b}] }\naccounts { A { users: [{user: a, password: c}] } }\n",
	"accounts { $G { } }\n",
	"accounts { A { jetstream: disabled } }\n",
	"accounts { A { jetstream: true } }\n",
	"accounts { A: [] }\n",
	"accounts [A, B]\n",
	"system_account: 1\n",
	"x = 1\nport: $x\n",
	"operator: \"/dev/zero\"\n",
}

// renderedSeeds are texts as Render writes them, at the edges of what it
// writes: both the check and nats-server accept each, and the fuzz target
// starts from them so that its mutations land near acceptance.
var renderedSeeds = []string{
	"port: 4222\n",
	"server_name: $SERVER_NAME\nport: 4222\nhttp_port: 8222\npid_file: \"/var/run/nats/nats.pid\"\nlame_duck_duration: \"30s\"\nlame_duck_grace_period: \"10s\"\n",
	"cluster {\n  name: \"nats\"\n  port: 6222\n  no_advertise: true\n  advertise: $ADVERTISE\n  authorization {\n    user: $ROUTE_USER\n    password: $ROUTE_PASSWORD\n  }\n  routes: $ROUTE_URLS\n}\n",
	"cluster {\n  name: \"nats\"\n  routes: [\n    \"nats://nats-0.nats:6222\"\n    \"nats://nats-1.nats:6222\"\n  ]\n}\n",
	"jetstream {\n  store_dir: \"/data\"\n  max_memory_store: 1073741824\n  max_file_store: 10737418240\n  domain: \"hub\"\n}\n",
	"authorization {\n  token: $NATS_TOKEN\n}\n",
	"accounts {\n  APP {\n    jetstream: enabled\n    users: [\n      {user: \"app\", password: $APP_PASSWORD}\n    ]\n  }\n  SYS {\n    users: [\n      {user: $SYS_USER, password: $SYS_PASSWORD}\n    ]\n  }\n}\nsystem_account: \"SYS\"\n",
	"server_metadata {\n  \"kubenats.io/config\": \"abc\"\n  team: \"x\"\n}\nserver_tags: [\"a\", \"b:c\"]\nmax_payload: 2097152\nping_interval: \"2m\"\nwrite_timeout: \"close\"\n",
}
