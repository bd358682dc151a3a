package upstream

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// repoRoot is the repository's root: this package sits at test/upstream.
var repoRoot = filepath.Join("..", "..")

const importPath = "github.com/kubenats/kubenats/test/upstream"

// TestUpstreamTestsListed: the Makefile's UPSTREAM_TESTS, which `make
// test-upstream` (and so .ci/run) runs against the real files, names
// exactly the tests that read this package's data: every Test function of
// the repository that reaches an upstream.* call (directly or through
// helpers of its own package), and, here, those that ask for the real
// files. Careless variants it catches: a new test reading the chart's
// rendering left out of the list (it would never meet the real
// rendering), and a renamed test left in it (-run matches nothing, and
// nothing says so).
func TestUpstreamTestsListed(t *testing.T) {
	listed := makefileUpstreamTests(t)
	var found []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		switch d.Name() {
		case "bin", ".git", "testdata", "node_modules":
			return filepath.SkipDir
		}
		tests, err := testsReachingUpstream(path)
		found = append(found, tests...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(found)
	sort.Strings(listed)
	if !slices.Equal(found, listed) {
		t.Errorf("Makefile UPSTREAM_TESTS lists\n  %v\nthe tests that read package upstream's data are\n  %v", listed, found)
	}
}

// makefileUpstreamTests are the names in the Makefile's UPSTREAM_TESTS.
func makefileUpstreamTests(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^UPSTREAM_TESTS :=((?:.*\\\n)*.*)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("no UPSTREAM_TESTS in the Makefile")
	}
	var out []string
	for _, f := range strings.FieldsFunc(string(m[1]), func(r rune) bool { return r == '|' || r == '\\' || r == '\n' || r == '\t' || r == ' ' }) {
		out = append(out, f)
	}
	return out
}

// testsReachingUpstream are the Test functions of the Go files in dir
// whose bodies reach this package's data: an upstream.* reference (here,
// in this package, a call of Real or dir), or a call of a function of
// the same directory that does.
func testsReachingUpstream(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	here, err := filepath.Abs(".")
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	self := abs == here
	bodies := map[string][]*ast.BlockStmt{}
	reaches := map[string]bool{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		local := ""
		for _, imp := range f.Imports {
			if strings.Trim(imp.Path.Value, `"`) == importPath {
				local = "upstream"
				if imp.Name != nil {
					local = imp.Name.Name
				}
			}
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || fn.Recv != nil {
				continue
			}
			name := fn.Name.Name
			bodies[name] = append(bodies[name], fn.Body)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if id, ok := n.X.(*ast.Ident); ok && local != "" && id.Name == local {
						reaches[name] = true
					}
				case *ast.CallExpr:
					if id, ok := n.Fun.(*ast.Ident); ok && self && (id.Name == "Real" || id.Name == "dir") {
						reaches[name] = true
					}
				}
				return true
			})
		}
	}
	for changed := true; changed; {
		changed = false
		for name, list := range bodies {
			if reaches[name] {
				continue
			}
			for _, body := range list {
				ast.Inspect(body, func(n ast.Node) bool {
					if id, ok := n.(*ast.Ident); ok && id.Name != name && reaches[id.Name] {
						reaches[name], changed = true, true
					}
					return !reaches[name]
				})
			}
		}
	}
	var out []string
	for name := range reaches {
		if strings.HasPrefix(name, "Test") && name != "TestMain" {
			out = append(out, name)
		}
	}
	return out, nil
}
