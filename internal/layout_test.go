// Package internal_test holds the test of the packages' layout: which
// package may import which (docs/development.md, "The packages").
package internal_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/kubenats/kubenats/"

// controllerPackages are the packages that reconcile a kind: the named
// ones, and any internal package whose name ends in "controller".
func isController(pkg string) bool {
	switch pkg {
	case "internal/natscluster", "internal/jetstreamcontroller", "internal/accountcontroller":
		return true
	}
	return strings.HasPrefix(pkg, "internal/") && strings.HasSuffix(pkg, "controller")
}

// imports reads the imports of every Go file (tests included) of every
// package under internal/, by the package's path in the module.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Join("internal", filepath.Dir(path)))
		for _, spec := range f.Imports {
			p, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			out[pkg] = append(out[pkg], strings.TrimPrefix(p, module))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// layoutViolations are the imports the layout forbids: a controller
// package importing another, internal/servers importing a controller,
// and internal/render importing a controller, internal/servers,
// internal/apply or client-go (render builds objects: it reads no
// cluster; controller-runtime's client package is allowed for the
// client.Object interface its lists are made of).
func layoutViolations(all map[string][]string) []string {
	var out []string
	for pkg, imps := range all {
		for _, imp := range imps {
			switch {
			case isController(pkg) && isController(imp) && imp != pkg:
				out = append(out, pkg+" imports the controller "+imp)
			case pkg == "internal/servers" && isController(imp):
				out = append(out, pkg+" (below every controller) imports "+imp)
			case pkg == "internal/render" && (isController(imp) || imp == "internal/servers" || imp == "internal/apply" ||
				strings.HasPrefix(imp, "k8s.io/client-go/")):
				out = append(out, pkg+" (builds objects only) imports "+imp)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestLayout: no controller package imports another, internal/servers
// imports none, and internal/render imports no controller, no
// internal/servers and no client. Careless variants caught (each added
// for the run, then removed): internal/accountcontroller importing
// internal/natscluster (for its ErrNoServers, as it once borrowed
// internal/controller's), and internal/render importing internal/servers.
func TestLayout(t *testing.T) {
	all := imports(t)
	// The test is no test if the packages it guards are not where it
	// looks.
	for _, pkg := range []string{"internal/natscluster", "internal/jetstreamcontroller", "internal/accountcontroller", "internal/servers", "internal/render"} {
		if len(all[pkg]) == 0 {
			t.Fatalf("no imports read for %s: has the layout moved?", pkg)
		}
	}
	if _, err := os.Stat("controller"); err == nil {
		t.Error("internal/controller is back: a controller gets a package of its own")
	}
	for _, v := range layoutViolations(all) {
		t.Error(v)
	}
}

// TestLayoutViolationsNamesEachForbiddenImport: each rule of
// layoutViolations catches its case and lets the allowed ones through.
// Careless variant caught: the render rule without the client-go prefix
// (the client-go row goes unreported).
func TestLayoutViolationsNamesEachForbiddenImport(t *testing.T) {
	got := layoutViolations(map[string][]string{
		"internal/natscluster":         {"internal/servers", "internal/render", "internal/natscluster"},
		"internal/jetstreamcontroller": {"internal/accountcontroller"},
		"internal/newkindcontroller":   {"internal/natscluster"},
		"internal/servers":             {"internal/jetstreamcontroller", "internal/jetstream"},
		"internal/render":              {"internal/servers", "k8s.io/client-go/kubernetes", "sigs.k8s.io/controller-runtime/pkg/client", "internal/natsconf"},
	})
	want := []string{
		"internal/jetstreamcontroller imports the controller internal/accountcontroller",
		"internal/newkindcontroller imports the controller internal/natscluster",
		"internal/render (builds objects only) imports internal/servers",
		"internal/render (builds objects only) imports k8s.io/client-go/kubernetes",
		"internal/servers (below every controller) imports internal/jetstreamcontroller",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
