package natsconf

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/conf"
)

// openedAFile reports whether a nats-server error says it tried to read an
// included file: the one thing no check may ever do.
func openedAFile(err error) bool {
	return err != nil && strings.Contains(err.Error(), "include file")
}

// FuzzRender renders arbitrary passthrough values (spec.config decoded as
// the operator decodes it) and holds the writer to its promises: no panic;
// and whatever it writes is a file nats-server's parser reads back, with
// no include directive in it and exactly the top-level keys it was given,
// each with the value it was given (sameValue). The careless writer that
// this catches, and a check of keys alone let through: one that writes a
// key with any parseable value, or turns a number into a string, a list
// into its first element, drops a nested key.
func FuzzRender(f *testing.F) {
	for _, seed := range []string{
		`{"max_payload": 1048576}`,
		`{"debug": true, "trace": false, "ping_interval": "2m"}`,
		`{"server_tags": ["a", "b:c"], "server_metadata": {"team": "x", "include": {"a": "b"}}}`,
		`{"server_metadata": {"q": "say \"hi\" $HOME #c // d", "n": [1, 2.5, -3, 1e3, [], {}]}}`,
		`{"operator": "/dev/zero"}`,
		`{"include": "/dev/zero"}`,
		`{"max_payload": 1e400}`,
		`{"server_metadata": {"\u0130nclude x": "y"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var extra map[string]any
		if err := dec.Decode(&extra); err != nil {
			return
		}
		out, err := (&Config{Port: 4222, Extra: extra}).Render()
		if err != nil {
			return
		}
		if refuseDirectives(out) != nil {
			return // a quoted value spells "include "; CheckRendered refuses such files
		}
		parsed, err := conf.Parse(string(out))
		if err != nil {
			t.Fatalf("Render wrote what the parser refuses: %v\n%s", err, out)
		}
		for k, want := range extra {
			got, ok := parsed[k]
			if !ok {
				t.Fatalf("key %q did not come back:\n%s", k, out)
			}
			if why := sameValue(want, got); why != "" {
				t.Fatalf("key %q: %s:\n%s", k, why, out)
			}
		}
		if len(parsed) != len(extra)+1 { // + port
			t.Fatalf("parsed %d top-level keys from %d:\n%s", len(parsed), len(extra)+1, out)
		}
		if err := CheckRendered(out); openedAFile(err) {
			t.Fatalf("the check opened a file: %v", err)
		}
		assertNoKinderThanTheServer(t, out)
	})
}

// FuzzCheckRendered runs the config check on arbitrary text: it may refuse,
// it may never panic or open a file, and whatever it accepts nats-server's
// own option processing accepts too (the operator's check runs without the
// server; this is what keeps it no kinder than the server).
func FuzzCheckRendered(f *testing.F) {
	for _, seed := range append(differentialSeeds, renderedSeeds...) {
		f.Add([]byte(seed))
	}
	for _, seed := range []string{
		"port: 4222\n",
		"include \"/dev/zero\"\n",
		"a { include dev/zero }\n",
		"operator: \"/dev/zero\"\n",
		"tls { cert_file: \"/dev/zero\" }\n",
		"debug: true, INCLUDE x\n",
		"accounts { A { users: [{user: a, password: $P}] } }\n",
		"max_payload: 1e\n",
		"x: [1, {include: 2}]\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		if err := CheckRendered(text); openedAFile(err) {
			t.Fatalf("CheckRendered opened a file for %q: %v", text, err)
		}
		assertNoKinderThanTheServer(t, text)
	})
}

// FuzzCheckEnvString checks arbitrary Secret values: no panic, no file
// opened, and an accepted value is one nats-server reads back unchanged.
func FuzzCheckEnvString(f *testing.F) {
	for _, seed := range []string{
		"abcDEF123", "0123", "yes", "a,b", "abc,", "x\ninclude /dev/zero", "{include x}",
		"$HOME", "$2a$11$abcdefghijklmnopqrstuv", "a b", "héllo", "a#b", `a\b`, "[1]",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		err := CheckEnvString(value)
		if openedAFile(err) {
			t.Fatalf("CheckEnvString(%q) opened a file: %v", value, err)
		}
		if err != nil {
			return
		}
		if strings.Contains(strings.ToLower(value), "include") {
			t.Fatalf("CheckEnvString accepted %q", value)
		}
		parsed, perr := conf.Parse("v: " + value)
		if perr != nil || parsed["v"] != value {
			t.Fatalf("accepted %q, which nats-server reads as %#v (%v)", value, parsed["v"], perr)
		}
	})
}
