package convert

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// leakNames are environment variables of the converting process, spelled
// with every character a reference's name can hold that a careless scan
// for names might stop at (or not).
var leakNames = []string{"KUBENATS_LEAK", `LEAK"Q`, "LEAK:C", "LEAK.D", "LEAK{B", "LEAK[A", "LEAK#H", "LEAK//S", "LEAK(P", "LEAK)P", "LEAK$D", "2a"}

// leakContexts are the places a reference can stand in nats.conf; %s is
// the reference.
var leakContexts = []string{
	"write_deadline: %s\n",
	"write_deadline = %s\n",
	"write_deadline %s\n",
	"write_deadline: %s; max_payload: 1\n",
	"write_deadline: %s # a comment\n",
	"write_deadline: %s // a comment\n",
	"server_tags: [%s]\n",
	"server_tags: [a, %s, b]\n",
	"server_tags: [\n  %s\n]\n",
	"server_metadata: {a: %s}\n",
	"server_metadata {\n  own: 1\n  a: %s\n}\n",
	"jetstream { store_dir: /data, domain: %s }\n",
	"write_deadline: %s\r\n",
	"write_deadline: %s\t\n",
	"write_deadline: %s",
}

// TestChartConfReadsNoEnvironment: a nats.conf that refers to variables it
// does not define, named as the operator's (or the user's) environment
// names them, in every place a reference can stand: the conversion is
// refused naming the key path and the reference, and nothing of the
// environment's values is in the result, the error or the losses.
// Careless variant: the conf.Parse of the text as it was, which falls
// back to os.LookupEnv (watched: the values carried into spec.config and
// the jetstream domain).
func TestChartConfReadsNoEnvironment(t *testing.T) {
	for i, name := range leakNames {
		t.Setenv(name, fmt.Sprintf("leaked-value-%d", i))
	}
	t.Setenv("SERVER_NAME", "leaked-server-name")
	for _, name := range leakNames {
		for j, context := range leakContexts {
			text := minimalConf + fmt.Sprintf(context, "$"+name)
			res, err := Chart(documents(t, minimalChart(t, text, "")), "default")
			out := dump(t, res, err)
			if strings.Contains(out, "leaked-") {
				t.Errorf("name %q context %d: the environment's value is in the conversion:\n%s", name, j, out)
			}
			if err == nil || !strings.Contains(err.Error(), "refers to $"+name+",") {
				t.Errorf("name %q context %d: %v, want the reference refused by name", name, j, err)
			}
		}
	}
}

// dump is everything a conversion says: its objects, losses and error.
func dump(t *testing.T, res Result, err error) string {
	t.Helper()
	var b strings.Builder
	for _, o := range res.Objects {
		y, merr := yaml.Marshal(o)
		if merr != nil {
			t.Fatal(merr)
		}
		b.Write(y)
	}
	for _, l := range res.Lost {
		b.WriteString(l.String() + "\n")
	}
	if err != nil {
		b.WriteString(err.Error())
	}
	return b.String()
}

// TestChartConfVariablesItDefines: the variables nats.conf defines itself
// (at the top level or in the block around the reference) and those the
// nats container's env defines are read, whatever the converting process's
// environment holds under the same names; a reference made before its
// definition is refused, as nats-server would look it up in the pod's
// environment there. Careless variants: markers defined after the text
// or in place of nats.conf's own definitions (the defined variables
// refused), the container's env left out (SERVER_NAME refused).
func TestChartConfVariablesItDefines(t *testing.T) {
	t.Setenv("DEADLINE", "leaked-deadline")
	t.Setenv("own", "leaked-own")
	env := "        - name: DEADLINE\n          value: 7s\n"
	for _, tc := range []struct {
		name, text string
		want       map[string]string // spec.config, as JSON
		refused    string
	}{
		{"top level", "own: 5s\nwrite_deadline: $own\n", map[string]string{"write_deadline": `"5s"`}, ""},
		{"the container's env", "write_deadline: $DEADLINE\n", map[string]string{"write_deadline": `"7s"`}, ""},
		{"the block around", "server_metadata { own: x, a: $own }\n", map[string]string{"server_metadata": `{"a":"x","own":"x"}`}, ""},
		{"a list of them", "t: zone\nserver_tags: [$t, $t]\n", map[string]string{"server_tags": `["zone","zone"]`}, ""},
		{"before its definition", "write_deadline: $own\nown: 5s\n", nil, "nats.conf write_deadline refers to $own,"},
		{"defined in another block", "server_metadata { own: x }\nwrite_deadline: $own\n", nil, "nats.conf write_deadline refers to $own,"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Chart(documents(t, minimalChart(t, minimalConf+tc.text, env)), "default")
			if out := dump(t, res, err); strings.Contains(out, "leaked-") {
				t.Fatalf("the environment's value is in the conversion:\n%s", out)
			}
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("%v, want %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := res.Objects[0].(*v1alpha1.NatsCluster)
			for key, want := range tc.want {
				if got := string(c.Spec.Config[key].Raw); got != want {
					t.Errorf("spec.config.%s = %s, want %s", key, got, want)
				}
			}
		})
	}
}

// TestReferencedNames: the names a '$' can stand for end where
// nats-server's lexer ends an unquoted value. Careless variants: a scan
// that stops at the characters of a conventional name (LEAK"Q read as
// LEAK), one that goes past a ';' or a ','.
func TestReferencedNames(t *testing.T) {
	for text, want := range map[string]string{
		"a: $X\n":                "X",
		"a: $X;b: $Y,c\n":        "X Y",
		"a: [$X,$Y]\n":           "X Y",
		"a: {b: $X}\n":           "X",
		"a: $L\"Q:C.D{[#//()$\n": `L"Q:C.D{[#//()$`,
		"a: $X'y'\n":             "X",
		"a: $X\\y\n":             "X",
		"a: $X\x00y\n":           "X",
		"a: $X\r\nb: $X\tc: $Y ": "X Y",
		"a: $ b: $\n":            "",
		"a: \"$2a$11$abc\"\n":    `2a$11$abc" 11$abc" abc"`,
	} {
		names, err := referencedNames(text, chartConfLimits)
		if err != nil {
			t.Fatalf("referencedNames(%q): %v", text, err)
		}
		if got := strings.Join(names, " "); got != want {
			t.Errorf("referencedNames(%q) = %q, want %q", text, got, want)
		}
	}
}
