package helm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	chartcommon "helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	release "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/internal/manifest"
)

// operatorNamespace is where config/ installs the operator; the chart's
// release namespace in the comparisons.
const operatorNamespace = "kubenats-system"

// root is the repository's root: this module sits at test/helm.
var root = filepath.Join("..", "..")

// loadChart reads charts/kubenats as Helm reads a chart directory.
func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.LoadDir(filepath.Join(root, "charts", "kubenats"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// render renders the chart as `helm template` does, with Helm's own
// library, into namespace ns with the values of valuesYAML (a values
// file's text); it returns the objects or Helm's error.
func render(t *testing.T, ns, valuesYAML string) (objects, error) {
	t.Helper()
	vals := map[string]any{}
	if err := yaml.Unmarshal([]byte(valuesYAML), &vals); err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(action.NewConfiguration())
	install.DryRunStrategy = action.DryRunClient
	install.Replace = true
	install.ReleaseName, install.Namespace = "kubenats", ns
	kube, err := chartcommon.ParseKubeVersion("v1.37.2")
	if err != nil {
		t.Fatal(err)
	}
	install.KubeVersion = kube
	rel, err := install.Run(loadChart(t), vals)
	if err != nil {
		return nil, err
	}
	r, ok := rel.(*release.Release)
	if !ok {
		t.Fatalf("release of type %T", rel)
	}
	return parse(t, []byte(r.Manifest)), nil
}

// mustRender is render that fails the test on Helm's error.
func mustRender(t *testing.T, ns, valuesYAML string) objects {
	t.Helper()
	objs, err := render(t, ns, valuesYAML)
	if err != nil {
		t.Fatalf("rendering the chart with %q: %v", valuesYAML, err)
	}
	return objs
}

// objects are rendered objects by kind/namespace/name, each in its JSON
// form (numbers as float64), so that two renderings compare as data, not
// as text.
type objects map[string]map[string]any

func key(u *unstructured.Unstructured) string {
	return u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
}

// parse reads a multi-document YAML stream.
func parse(t *testing.T, data []byte) objects {
	t.Helper()
	docs, err := manifest.Documents(data)
	if err != nil {
		t.Fatal(err)
	}
	out := objects{}
	for _, doc := range docs {
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(j, &u.Object); err != nil {
			t.Fatal(err)
		}
		if _, dup := out[key(u)]; dup {
			t.Fatalf("%s rendered twice", key(u))
		}
		out[key(u)] = u.Object
	}
	return out
}

// readDist parses one of the generated all-in-one installs, which `make
// generate` writes with kustomize from config/ (and verify-generate holds
// to it).
func readDist(t *testing.T, file string) objects {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "dist", file))
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, data)
}

func (o objects) keys() []string {
	var ks []string
	for k := range o {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// with returns the keys whose kind is kind.
func (o objects) of(kind string) []string {
	var ks []string
	for _, k := range o.keys() {
		if strings.HasPrefix(k, kind+"/") {
			ks = append(ks, k)
		}
	}
	return ks
}

// compare reports, object by object, how got differs from want: objects
// missing or extra, and for the others each differing field by its path.
func compare(want, got objects) []string {
	var out []string
	for _, k := range want.keys() {
		g, ok := got[k]
		if !ok {
			out = append(out, "missing: "+k)
			continue
		}
		out = append(out, diff(k, want[k], g)...)
	}
	for _, k := range got.keys() {
		if _, ok := want[k]; !ok {
			out = append(out, "extra: "+k)
		}
	}
	return out
}

func diff(path string, want, got any) []string {
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if wok && gok {
		keys := map[string]bool{}
		for k := range wm {
			keys[k] = true
		}
		for k := range gm {
			keys[k] = true
		}
		var ks []string
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		var out []string
		for _, k := range ks {
			out = append(out, diff(path+"."+k, wm[k], gm[k])...)
		}
		return out
	}
	wl, wok := want.([]any)
	gl, gok := got.([]any)
	if wok && gok && len(wl) == len(gl) {
		var out []string
		for i := range wl {
			out = append(out, diff(fmt.Sprintf("%s[%d]", path, i), wl[i], gl[i])...)
		}
		return out
	}
	if reflect.DeepEqual(want, got) {
		return nil
	}
	return []string{fmt.Sprintf("%s: want %s, got %s", path, brief(want), brief(got))}
}

func brief(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// field reads a nested field of an object, path in dots.
func field(obj map[string]any, path string) any {
	var v any = obj
	for _, p := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
