package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is where README.md is, seen from this package.
const repoRoot = "../.."

// docFiles are the README and every page of docs/, relative to root.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, p := range pages {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

// TestEveryLinkResolves is the check: the README and docs/ link only to
// files that exist and to anchors their headings make. Run on the README's
// sections as first moved into docs/, it reported seven links: anchors of
// sections now in another page (#security from natscluster.md, ...) and
// paths still written from the root (docs/benchmarks.md from docs/).
func TestEveryLinkResolves(t *testing.T) {
	problems, err := Check(repoRoot, docFiles(t, repoRoot))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCarelessLinksFail proves the check can fail: each careless link,
// written into a copy of the README, must be reported. (Without it a check
// that read no links at all would pass TestEveryLinkResolves too.)
func TestCarelessLinksFail(t *testing.T) {
	for _, tc := range []struct{ name, link, reason string }{
		{"a page that is not there", "[x](docs/nowhere.md)", "no such file"},
		{"an anchor no heading makes", "[x](docs/tls.md#route-tls-transitions)", "no heading"},
		{"an anchor of a section that moved", "[x](#route-tls-transition)", "no heading"},
		{"an anchor in the wrong case", "[x](docs/tls.md#Route-TLS-transition)", "no heading"},
		{"a path out of the repository", "[x](../README.md)", "leaves the repository"},
		{"an absolute path", "[x](/docs/tls.md)", "absolute path"},
		{"a URL without a host", "[x](https:///nats.io)", "without a host"},
		{"a scheme not http(s)", "[x](ftp://nats.io)", "scheme"},
		{"an image that is not there", "![x](docs/images/none.png)", "no such file"},
		{"a link run over two lines", "[JetStream\nresources](docs/jetstrem.md)", "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyDocs(t)
			readme := filepath.Join(root, "README.md")
			appended := lineCount(t, readme) + 1
			appendTo(t, readme, "\nSee "+tc.link+".\n")
			problems, err := Check(root, docFiles(t, root))
			if err != nil {
				t.Fatal(err)
			}
			// Only the appended lines count: the copy lacks what the docs
			// may link to outside docs/ (config/, say).
			var ours []Problem
			for _, p := range problems {
				if p.File == "README.md" && p.Line >= appended {
					ours = append(ours, p)
				}
			}
			if len(ours) != 1 || !strings.Contains(ours[0].Reason, tc.reason) {
				t.Fatalf("want one problem %q, got %v", tc.reason, ours)
			}
		})
	}
}

// TestCodeIsNotALink: an example in code is not followed, in a fenced
// block or a code span.
func TestCodeIsNotALink(t *testing.T) {
	text := "```md\n[x](nowhere.md)\n# not a heading\n```\nUse `[x](nowhere.md)` or ``a `[x](y)` b``.\n[real](here.md)\n"
	links := Links(text)
	if len(links) != 1 || links[0].Target != "here.md" || links[0].Line != 6 {
		t.Fatalf("links %+v, want only here.md on line 6", links)
	}
	if Anchors(text)["not-a-heading"] {
		t.Error("a # line in a fenced block made an anchor")
	}
}

func TestSlugFollowsGitHub(t *testing.T) {
	for title, want := range map[string]string{
		"GitOps: render without a cluster": "gitops-render-without-a-cluster",
		"What a NatsCluster gets":          "what-a-natscluster-gets",
		"`spec.config` keys":               "specconfig-keys",
		"Reloads and deleted Secrets":      "reloads-and-deleted-secrets",
		"Scaling down and out":             "scaling-down-and-out",
		"snake_case and dash-case":         "snake_case-and-dash-case",
		"See [TLS](tls.md) first":          "see-tls-first",
		"Über (beta) 2.15":                 "über-beta-215",
	} {
		if got := Slug(title); got != want {
			t.Errorf("Slug(%q) = %q, want %q", title, got, want)
		}
	}
}

func TestRepeatedHeadingsAreNumbered(t *testing.T) {
	a := Anchors("# Install\n## Operator flags\n## Operator flags\n## Operator flags ##\n")
	for _, want := range []string{"install", "operator-flags", "operator-flags-1", "operator-flags-2"} {
		if !a[want] {
			t.Errorf("no anchor %q in %v", want, a)
		}
	}
}

// copyDocs copies the README and docs/ into a temporary root, so that a
// test can break a link without touching the tree.
func copyDocs(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "docs"), os.DirFS(filepath.Join(repoRoot, "docs"))); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "README.md"), readme, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func lineCount(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}
