package natsconf

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/conf"
	"github.com/nats-io/nats-server/v2/server"
)

// These tests pin nats-server parser behaviour that the package's rules rely
// on. If a nats-server upgrade changes any of it, they say which rule to
// revisit.

// TestNatsServerRefusesTokenWithAccountUsers shows the rule behind Render's
// refusal: two files that each load fine cannot be combined.
func TestNatsServerRefusesTokenWithAccountUsers(t *testing.T) {
	setPodEnv(t)
	tokenPart, err := (&Config{Authorization: &Authorization{Token: Env("NATS_TOKEN")}}).Render()
	if err != nil {
		t.Fatal(err)
	}
	accountsPart, err := (&Config{Accounts: appAndSysAccounts()}).Render()
	if err != nil {
		t.Fatal(err)
	}
	combined := append(append([]byte{}, tokenPart...), accountsPart...)
	_, err = server.ProcessConfigFile(writeConf(t, combined))
	if err == nil {
		t.Fatalf("nats-server accepted a token with account users:\n%s", combined)
	}
	// The message depends on which key nats-server happens to process first
	// ("Can not have a token and accounts" or "... and a users array").
	if !strings.Contains(err.Error(), "Can not have a token and") {
		t.Errorf("unexpected error: %v", err)
	}

	// Render refuses the same combination up front.
	both := Config{Authorization: &Authorization{Token: Env("NATS_TOKEN")}, Accounts: appAndSysAccounts()}
	if _, err := both.Render(); err == nil {
		t.Error("Render accepted a token with account users")
	}

	// Accounts without users are fine next to a token, so the rule is no wider.
	opts, _, _ := renderAndLoad(t, &Config{
		Authorization: &Authorization{Token: Env("NATS_TOKEN")},
		Accounts:      []Account{{Name: "APP", JetStream: true}},
	})
	equal(t, "Authorization", opts.Authorization, podEnv["NATS_TOKEN"])
	expectAccounts(t, opts, "APP")
}

// TestEnvValueIsLexedAsConfig shows why the operator generates secrets as
// letters and digits starting with a letter: nats-server lexes the value of
// an environment variable as a config value, not as a plain string.
func TestEnvValueIsLexedAsConfig(t *testing.T) {
	cases := []struct {
		name      string
		value     string
		wantToken string // "" means nats-server must refuse the file
	}{
		{"letter-prefixed token", "t0ken9f8e7d6c5b4a", "t0ken9f8e7d6c5b4a"},
		{"all digits becomes a number", "0123456789", ""},
		{"size suffix becomes a number", "64k", ""},
		{"yes becomes a boolean", "yes", ""},
		{"hash inside the value is kept", "abc#def", "abc#def"},
		{"leading hash is kept", "#abc", "#abc"},
		{"backslash starts an escape", `a\tb`, "a\tb"},
		{"bad escape is a syntax error", `a\qb`, ""},
		{"brace makes a map", "{a: b}", ""},
		{"space is a syntax error", "abc def", ""},
		{"surrounding quotes are removed", `"abc"`, "abc"},
		{"leading dollar is another variable", "$SERVER_NAME", "nats-1"},
	}
	setPodEnv(t)
	cfg := Config{Authorization: &Authorization{Token: Env("LEXED_TOKEN")}}
	data, err := cfg.Render()
	if err != nil {
		t.Fatal(err)
	}
	path := writeConf(t, data)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("LEXED_TOKEN", tc.value)
			opts, err := server.ProcessConfigFile(path)
			if tc.wantToken == "" {
				if err == nil {
					t.Fatalf("nats-server accepted token env %q as %q", tc.value, opts.Authorization)
				}
				return
			}
			if err != nil {
				t.Fatalf("ProcessConfigFile: %v", err)
			}
			equal(t, "Authorization", opts.Authorization, tc.wantToken)
		})
	}
}

// TestMissingEnvVarFailsToLoad: an unset variable is a load error, not an
// empty string, so a pod missing its secret fails loudly.
func TestMissingEnvVarFailsToLoad(t *testing.T) {
	data, err := (&Config{ServerName: Env("KUBENATS_TEST_UNSET_VAR")}).Render()
	if err != nil {
		t.Fatal(err)
	}
	_, err = server.ProcessConfigFile(writeConf(t, data))
	if err == nil || !strings.Contains(err.Error(), "can not be found") {
		t.Fatalf("ProcessConfigFile error = %v, want a missing variable error", err)
	}
}

// TestQuotedDollarIsLiteral: String values never expand, even when a variable
// of that name exists.
func TestQuotedDollarIsLiteral(t *testing.T) {
	opts, _, data := renderAndLoad(t, &Config{ServerName: String("$SERVER_NAME")})
	equal(t, "ServerName", opts.ServerName, "$SERVER_NAME")
	if !strings.Contains(string(data), `server_name: "$SERVER_NAME"`) {
		t.Errorf("server name not written quoted:\n%s", data)
	}
}

// TestBlockKeysShadowEnvironment shows why Render refuses an environment
// variable named like an account: nats-server resolves $NAME against keys of
// enclosing blocks first, so the password below is the account block, not
// the environment variable.
func TestBlockKeysShadowEnvironment(t *testing.T) {
	setPodEnv(t)
	text := `accounts {
  APP_PASSWORD {
  }
  APP {
    users: [
      {
        user: "app"
        password: $APP_PASSWORD
      }
    ]
  }
}
`
	raw, err := conf.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	users := lookup(t, raw, "accounts", "APP", "users").([]any)
	password := users[0].(map[string]any)["password"]
	if _, isMap := password.(map[string]any); !isMap {
		t.Fatalf("password = %#v, want the APP_PASSWORD account block", password)
	}
}

// TestUnquotedNumbersTakeSuffixes shows why durations and user strings are
// always quoted and why number.go never emits exponents.
func TestUnquotedNumbersTakeSuffixes(t *testing.T) {
	raw, err := conf.Parse("a: 1m\nb: \"1m\"\nc: 30s\nd: 1e3\ne: 2e\nf: 0.25\n")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"a": int64(1_000_000), // m is the mega suffix
		"b": "1m",             // quoted stays text
		"c": "30s",            // not a suffix, falls back to a string
		"d": "1e3",            // exponent form is not a number
		"e": int64(2 * 1e18),  // e is the exa suffix
		"f": float64(0.25),    // plain decimals are floats
	}
	for k, v := range want {
		equal(t, k, raw[k], v)
	}
}

// TestPassthroughNumbersRoundTrip checks number.go against the lexer. The
// numbers sit in a block (server_metadata is the passthrough key that takes
// one) because only the writer is under test: nats-server would want
// strings there.
func TestPassthroughNumbersRoundTrip(t *testing.T) {
	cfg := Config{Extra: map[string]any{"server_metadata": map[string]any{
		"whole_float":    float64(1 << 20),
		"fraction":       0.25,
		"negative":       -1.5,
		"tiny":           1e-7,
		"large":          1e15,
		"exponent_json":  jsonNumber("1e3"),
		"int_json":       jsonNumber("-42"),
		"fraction_json":  jsonNumber("2.5"),
		"max_int64":      int64(9223372036854775807),
		"negative_whole": float64(-3),
	}}}
	data, err := cfg.Render()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := conf.Parse(string(data))
	if err != nil {
		t.Fatalf("conf.Parse: %v\n%s", err, data)
	}
	raw, _ := parsed["server_metadata"].(map[string]any)
	want := map[string]any{
		"whole_float":    int64(1 << 20),
		"fraction":       0.25,
		"negative":       -1.5,
		"tiny":           1e-7,
		"large":          int64(1e15),
		"exponent_json":  int64(1000),
		"int_json":       int64(-42),
		"fraction_json":  2.5,
		"max_int64":      int64(9223372036854775807),
		"negative_whole": int64(-3),
	}
	for k, v := range want {
		equal(t, k, raw[k], v)
	}
}

// TestNestedPassthroughRoundTrips checks the writer's blocks, arrays of
// blocks and arrays of arrays against the parser. Only server_metadata takes
// a block among the passthrough keys, so it carries the shapes here; the
// writer does not know which key it writes.
func TestNestedPassthroughRoundTrips(t *testing.T) {
	nested := map[string]any{
		"block": map[string]any{"port": jsonNumber("8080"), "no_tls": true},
		"list": []any{
			map[string]any{"urls": []any{"nats-leaf://hub-0:7422", "nats-leaf://hub-1:7422"}, "account": "APP"},
			[]any{"a", []any{}},
		},
		"include": map[string]any{"a": "b"},
	}
	data, err := (&Config{Extra: map[string]any{"server_metadata": nested}}).Render()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := conf.Parse(string(data))
	if err != nil {
		t.Fatalf("conf.Parse: %v\n%s", err, data)
	}
	want := map[string]any{
		"block": map[string]any{"port": int64(8080), "no_tls": true},
		"list": []any{
			map[string]any{"urls": []any{"nats-leaf://hub-0:7422", "nats-leaf://hub-1:7422"}, "account": "APP"},
			[]any{"a", []any{}},
		},
		// A key spelled include is written quoted, so it is a key and not
		// the directive that would read a file.
		"include": map[string]any{"a": "b"},
	}
	if got := parsed["server_metadata"]; !reflect.DeepEqual(got, want) {
		t.Errorf("server_metadata = %#v\nwant %#v\nrendered:\n%s", got, want, data)
	}
}
