package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// update rewrites the golden files instead of comparing with them:
//
//	go test ./cmd/kubenats/ -run TestRenderGolden -update
var update = flag.Bool("update", false, "rewrite testdata/*.golden.yaml from the current output")

const samplesDir = "../../config/samples"

// wantKinds is what `kubenats render` prints for one NatsCluster, in order.
var wantKinds = []string{"NetworkPolicy", "ServiceAccount", "ConfigMap", "Service", "Service", "StatefulSet", "PodDisruptionBudget"}

// runCLI runs the command line in-process and returns its exit code and
// both outputs.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// renderOK runs `kubenats render -f path` and fails the test unless it
// succeeds.
func renderOK(t *testing.T, path string) string {
	t.Helper()
	code, stdout, stderr := runCLI(t, "render", "-f", path)
	if code != 0 {
		t.Fatalf("render -f %s: exit code %d, stderr:\n%s", path, code, stderr)
	}
	return stdout
}

// samples lists the files in config/samples.
func samples(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(samplesDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no samples found in %s", samplesDir)
	}
	return files
}

// writeFile writes content to a new file in a temporary directory.
func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// parseStream splits a YAML stream into its documents. Only the first
// document may be empty: it holds nothing but the header comment.
func parseStream(t *testing.T, stream string) []map[string]any {
	t.Helper()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(stream)))
	var docs []map[string]any
	for i := 0; ; i++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("reading document %d: %v", i, err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("document %d does not parse: %v\n%s", i, err, raw)
		}
		if len(doc) == 0 {
			if i == 0 {
				continue
			}
			t.Fatalf("document %d is empty:\n%q", i, raw)
		}
		docs = append(docs, doc)
	}
}

// field returns the string at a dotted path of doc, or "".
func field(doc map[string]any, path string) string {
	var v any = doc
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// keyPaths returns the path of every map key named key, at any depth.
func keyPaths(v any, key, at string) []string {
	var out []string
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if k == key {
				out = append(out, at+"."+k)
			}
			out = append(out, keyPaths(child, key, at+"."+k)...)
		}
	case []any:
		for _, child := range t {
			out = append(out, keyPaths(child, key, at+"[]")...)
		}
	}
	return out
}

var statusLine = regexp.MustCompile(`(?m)^\s*(- )?status:`)

func TestRenderSamplesPrintsExpectedObjects(t *testing.T) {
	for _, path := range samples(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			out := renderOK(t, path)
			docs := parseStream(t, out)
			var kinds []string
			for i, doc := range docs {
				for _, f := range []string{"apiVersion", "kind", "metadata.name"} {
					if field(doc, f) == "" {
						t.Errorf("document %d (%s %s) has no %s", i, field(doc, "kind"), field(doc, "metadata.name"), f)
					}
				}
				kinds = append(kinds, field(doc, "kind"))
				if p := keyPaths(doc, "status", ""); len(p) > 0 {
					t.Errorf("%s %s has status keys at %v", field(doc, "kind"), field(doc, "metadata.name"), p)
				}
				if p := keyPaths(doc, "creationTimestamp", ""); len(p) > 0 {
					t.Errorf("%s %s has creationTimestamp at %v", field(doc, "kind"), field(doc, "metadata.name"), p)
				}
			}
			if !reflect.DeepEqual(kinds, wantKinds) {
				t.Errorf("kinds = %v, want %v", kinds, wantKinds)
			}
			for _, k := range kinds {
				if k == "Secret" {
					t.Error("output has a Secret: render must never print generated secret values")
				}
			}
			if strings.Contains(out, "creationTimestamp") {
				t.Error("output mentions creationTimestamp")
			}
			if loc := statusLine.FindStringIndex(out); loc != nil {
				t.Errorf("output has a status: key: %q", out[loc[0]:min(loc[1]+40, len(out))])
			}
		})
	}
}

func TestRenderIsByteForByteRepeatable(t *testing.T) {
	inputs := append(samples(t), filepath.Join("testdata", "map-heavy.yaml"), filepath.Join("testdata", "networkpolicy.yaml"), filepath.Join("testdata", "tls.yaml"), filepath.Join("testdata", "mesh.yaml"))
	for _, path := range inputs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			first := renderOK(t, path)
			// Go randomises map iteration on every range: several runs give
			// an unsorted map many chances to show itself.
			for i := 0; i < 10; i++ {
				if again := renderOK(t, path); again != first {
					t.Fatalf("run %d differs from the first:\n%s", i+2, firstDifference(first, again))
				}
			}
		})
	}
}

// TestRenderMapHeavyInputKeepsEveryEntry makes sure the map-heavy input of
// the repeatability test really reaches the output, so that its maps are
// exercised.
// TestRenderMeshPrintsThePolicyAtItsTargetMode: GitOps users get the end
// state, the policy in the mode the spec asks for, before the StatefulSet.
func TestRenderMeshPrintsThePolicyAtItsTargetMode(t *testing.T) {
	out := renderOK(t, filepath.Join("testdata", "mesh.yaml"))
	for _, cluster := range []struct{ name, mode string }{{"strict", "STRICT"}, {"permissive", "PERMISSIVE"}} {
		var policy, statefulSet int
		for i, doc := range strings.Split(out, "\n---\n") {
			if strings.Contains(doc, "name: "+cluster.name+"\n") && strings.Contains(doc, "kind: PeerAuthentication") {
				policy = i
				if !strings.Contains(doc, "mtls:\n    mode: "+cluster.mode) {
					t.Errorf("policy of %s, want mode %s:\n%s", cluster.name, cluster.mode, doc)
				}
			}
			if strings.Contains(doc, "name: "+cluster.name+"\n") && strings.Contains(doc, "kind: StatefulSet") {
				statefulSet = i
				if !strings.Contains(doc, "sidecar.istio.io/inject: \"true\"") {
					t.Errorf("StatefulSet of %s asks for no sidecar", cluster.name)
				}
			}
		}
		if policy == 0 || statefulSet == 0 || policy > statefulSet {
			t.Errorf("%s: policy at document %d, StatefulSet at %d: want both, the policy first", cluster.name, policy, statefulSet)
		}
	}
}

func TestRenderMapHeavyInputKeepsEveryEntry(t *testing.T) {
	out := renderOK(t, filepath.Join("testdata", "map-heavy.yaml"))
	for _, want := range []string{
		"cost-center: \"4711\"", "zone-pinned: \"yes\"", "release: blue",
		"prometheus.io/scrape: \"true\"", "example.com/gamma: c",
		"node.example.com/pool: nats", "topology.kubernetes.io/region: eu-west-1",
		"service.beta.kubernetes.io/aws-load-balancer-type: nlb",
		"max_connections: 10000", "ping_interval: \"30s\"", "write_deadline: \"5s\"", "logtime: true",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// TestRenderGolden compares the production sample's rendering with
// testdata/production.golden.yaml byte for byte. Regenerate it, after
// reading the diff, with -update.
func TestRenderGolden(t *testing.T) {
	for _, tc := range []struct {
		input  string
		golden string
	}{
		{filepath.Join(samplesDir, "natscluster-production.yaml"), filepath.Join("testdata", "production.golden.yaml")},
		{filepath.Join("testdata", "networkpolicy.yaml"), filepath.Join("testdata", "networkpolicy.golden.yaml")},
		{filepath.Join("testdata", "mesh.yaml"), filepath.Join("testdata", "mesh.golden.yaml")},
		{filepath.Join("testdata", "tls.yaml"), filepath.Join("testdata", "tls.golden.yaml")},
		{filepath.Join("testdata", "topology.yaml"), filepath.Join("testdata", "topology.golden.yaml")},
	} {
		t.Run(filepath.Base(tc.golden), func(t *testing.T) {
			got := renderOK(t, tc.input)
			if *update {
				if err := os.WriteFile(tc.golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("rewrote %s", tc.golden)
				return
			}
			want, err := os.ReadFile(tc.golden)
			if err != nil {
				t.Fatalf("%v (create it with -update)", err)
			}
			if got != string(want) {
				t.Errorf("render -f %s differs from %s (rerun with -update if the change is intended):\n%s",
					tc.input, tc.golden, firstDifference(string(want), got))
			}
		})
	}
}

// firstDifference shows the first line at which two texts differ.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl
		}
	}
	return "(no line differs)"
}

func TestRenderRejectsBadInput(t *testing.T) {
	const cluster = "apiVersion: kubenats.io/v1alpha1\nkind: NatsCluster\nmetadata:\n  name: bad\n"
	for _, tc := range []struct {
		name     string
		input    string
		mentions []string
	}{
		{
			name:     "document of another kind",
			input:    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
			mentions: []string{`"ConfigMap"`},
		},
		{
			name:     "another kind after a valid NatsCluster",
			input:    cluster + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n",
			mentions: []string{`"Deployment"`},
		},
		{
			name:     "NatsCluster of another API version",
			input:    "apiVersion: kubenats.io/v1beta1\nkind: NatsCluster\nmetadata:\n  name: x\n",
			mentions: []string{"kubenats.io/v1beta1"},
		},
		{
			name:     "spec.config sets a key the operator owns",
			input:    cluster + "spec:\n  config:\n    port: 4333\n",
			mentions: []string{`"port"`, "bad"},
		},
		{
			name:     "spec.config with a misspelt key",
			input:    cluster + "spec:\n  config:\n    max_paylod: 1\n",
			mentions: []string{"max_paylod"},
		},
		{
			name:     "unknown spec field",
			input:    cluster + "spec:\n  replica: 3\n",
			mentions: []string{`"replica"`},
		},
		{
			name:     "not YAML",
			input:    "apiVersion: [\n",
			mentions: []string{"in.yaml"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "render", "-f", writeFile(t, tc.input))
			if code != 1 {
				t.Errorf("exit code = %d, want 1", code)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing on error", stdout)
			}
			for _, m := range tc.mentions {
				if !strings.Contains(stderr, m) {
					t.Errorf("stderr = %q, want it to mention %s", stderr, m)
				}
			}
		})
	}
}

func TestRunExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string // a substring; "" checks for no output at all
		wantStderr string // a substring; "" checks for no output at all
	}{
		{"render without -f", []string{"render"}, 2, "", "-f"},
		{"render with an unknown flag", []string{"render", "-x"}, 2, "", "-x"},
		{"render of a missing file", []string{"render", "-f", filepath.Join("testdata", "no-such-file.yaml")}, 1, "", "no-such-file.yaml"},
		{"unknown command", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"no command", nil, 2, "", "Usage:"},
		{"version", []string{"version"}, 0, version + "\n", ""},
		{"help", []string{"help"}, 0, "Usage:", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit code = %d, want %d (stderr %q)", code, tc.wantCode, stderr)
			}
			check := func(stream, got, want string) {
				if want == "" && got != "" || !strings.Contains(got, want) {
					t.Errorf("%s = %q, want %s", stream, got, describe(want))
				}
			}
			check("stdout", stdout, tc.wantStdout)
			check("stderr", stderr, tc.wantStderr)
		})
	}
}

func describe(want string) string {
	if want == "" {
		return "nothing"
	}
	return "it to contain " + want
}

func TestVersionPrintsOneLine(t *testing.T) {
	code, stdout, _ := runCLI(t, "version")
	if code != 0 {
		t.Fatalf("exit code = %d, want 0", code)
	}
	if strings.Count(stdout, "\n") != 1 || !strings.HasSuffix(stdout, "\n") || strings.TrimSpace(stdout) == "" {
		t.Errorf("version printed %q, want one non-empty line", stdout)
	}
}

// TestRenderSkipsDocumentsWithoutContent: documents that hold no object
// (blank, or only comments, as kubectl and kustomize accept them) are
// skipped.
func TestRenderSkipsDocumentsWithoutContent(t *testing.T) {
	const cluster = "apiVersion: kubenats.io/v1alpha1\nkind: NatsCluster\nmetadata:\n  name: only\n"
	for _, tc := range []struct {
		name  string
		input string
	}{
		{name: "leading separator", input: "---\n" + cluster},
		{name: "trailing separator", input: cluster + "---\n"},
		{name: "blank document", input: cluster + "---\n\n   \n---\n"},
		{name: "comment above the first object", input: "# header\n" + cluster},
		{name: "comment-only document before the object", input: "# Copyright header\n---\n" + cluster},
		{name: "comment-only document after the object", input: cluster + "---\n# the end\n"},
		{name: "two separators in a row", input: "---\n---\n" + cluster},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "render", "-f", writeFile(t, tc.input))
			if code != 0 {
				t.Fatalf("exit code = %d, want 0; stderr:\n%s", code, stderr)
			}
			var kinds []string
			for _, d := range parseStream(t, stdout) {
				kinds = append(kinds, field(d, "kind"))
			}
			if !reflect.DeepEqual(kinds, wantKinds) {
				t.Errorf("kinds = %v, want the objects of one NatsCluster %v", kinds, wantKinds)
			}
		})
	}
}

func TestRenderMultiDocumentInputRendersEveryCluster(t *testing.T) {
	input := `# two clusters in one file
apiVersion: kubenats.io/v1alpha1
kind: NatsCluster
metadata:
  name: alpha
  namespace: team-a
---
apiVersion: kubenats.io/v1alpha1
kind: NatsCluster
metadata:
  name: beta
spec:
  replicas: 1
  auth:
    mode: token
---
`
	out := renderOK(t, writeFile(t, input))

	docs := parseStream(t, out)
	var got []string
	for _, d := range docs {
		got = append(got, field(d, "kind")+" "+field(d, "metadata.namespace")+"/"+field(d, "metadata.name"))
	}
	// Child names, in the order of wantKinds.
	suffixes := []string{"-monitoring-ports", "", "-config", "-headless", "", "", ""}
	var want []string
	for _, c := range []struct{ ns, name string }{{"team-a", "alpha"}, {"default", "beta"}} {
		for i, k := range wantKinds {
			want = append(want, k+" "+c.ns+"/"+c.name+suffixes[i])
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("objects =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	// Each cluster's header comment names it and comes before its objects.
	alpha := strings.Index(out, "# NatsCluster team-a/alpha.")
	beta := strings.Index(out, "# NatsCluster default/beta.")
	if alpha != 0 {
		t.Errorf("output does not start with alpha's header (index %d):\n%s", alpha, out)
	}
	if beta < 0 || beta < strings.LastIndex(out, "name: alpha-config") || beta > strings.Index(out, "name: beta-config") {
		t.Errorf("beta's header is missing or not between the two clusters' objects (index %d)", beta)
	}
	// The headers list the Secrets each cluster expects: alpha (users) its
	// users.conf with both passwords, beta (token) a token only.
	for _, want := range []string{"Secret alpha-users, key users.conf", "Secret beta-auth, key token"} {
		if !strings.Contains(out, want) {
			t.Errorf("headers lack %q", want)
		}
	}
	if strings.Contains(out, "beta-system") {
		t.Error("beta is in mode token and has no system user, yet its header names beta-system")
	}
}
