// Package doccheck checks the links of the README and docs/: every relative
// link names a file that exists, every #anchor one that a heading of the
// target file produces, and every http(s) link is at least well formed (no
// network: the check must pass offline and cannot go flaky).
//
// Its test, run by plain `go test ./...`, is the check; the package holds
// the parts a test of the check itself needs too.
package doccheck

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Problem is one link that does not resolve.
type Problem struct {
	File   string // relative to the root
	Line   int
	Target string
	Reason string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Target, p.Reason)
}

// Check reads files (paths relative to root) and reports every link that
// does not resolve.
func Check(root string, files []string) ([]Problem, error) {
	anchors := map[string]map[string]bool{} // by file, read once
	anchorsOf := func(rel string) (map[string]bool, error) {
		if a, ok := anchors[rel]; ok {
			return a, nil
		}
		text, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return nil, err
		}
		a := Anchors(string(text))
		anchors[rel] = a
		return a, nil
	}
	var problems []Problem
	for _, file := range files {
		text, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			return nil, err
		}
		for _, l := range Links(string(text)) {
			reason, err := checkLink(root, file, l.Target, anchorsOf)
			if err != nil {
				return nil, err
			}
			if reason != "" {
				problems = append(problems, Problem{File: file, Line: l.Line, Target: l.Target, Reason: reason})
			}
		}
	}
	return problems, nil
}

// checkLink returns why target, linked from file, does not resolve, or "".
func checkLink(root, file, target string, anchorsOf func(string) (map[string]bool, error)) (string, error) {
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		u, err := url.Parse(target)
		if err != nil {
			return "malformed URL: " + err.Error(), nil
		}
		if u.Host == "" {
			return "URL without a host", nil
		}
		return "", nil
	}
	if u, err := url.Parse(target); err == nil && u.Scheme != "" {
		return "scheme " + u.Scheme + " is neither http nor https", nil
	}
	path, anchor, _ := strings.Cut(target, "#")
	rel := file
	if path != "" {
		if strings.HasPrefix(path, "/") {
			// GitHub reads these from the repository root, any other viewer
			// from the filesystem's: a relative link works in both.
			return "absolute path: write it relative to " + file, nil
		}
		rel = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
		if rel == ".." || strings.HasPrefix(rel, "../") {
			return "leaves the repository", nil
		}
		info, err := os.Stat(filepath.Join(root, rel))
		if err != nil {
			return "no such file", nil
		}
		if info.IsDir() || anchor == "" {
			return "", nil
		}
	}
	if anchor == "" {
		return "empty link", nil
	}
	if !strings.HasSuffix(rel, ".md") {
		return "an anchor into a file that is not Markdown", nil
	}
	a, err := anchorsOf(rel)
	if err != nil {
		return "", err
	}
	if !a[anchor] {
		return "no heading of " + rel + " makes the anchor #" + anchor, nil
	}
	return "", nil
}

// Link is one link or image of a Markdown text.
type Link struct {
	Target string
	Line   int
}

// An inline link or image: [text](target) or ![alt](target "title"). The
// text may run over lines, as a wrapped paragraph's does.
var linkPattern = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)

// Links lists the links of a Markdown text, outside code: a "[x](y)" in a
// fenced block or a code span is an example, not a link.
func Links(text string) []Link {
	prose := blankCode(text)
	var links []Link
	for _, m := range linkPattern.FindAllStringSubmatchIndex(prose, -1) {
		target := prose[m[2]:m[3]]
		links = append(links, Link{Target: target, Line: 1 + strings.Count(prose[:m[2]], "\n")})
	}
	return links
}

// Anchors are the #anchors the headings of a Markdown text produce, as
// GitHub makes them: the second heading of the same text gets "-1", the
// third "-2". Only ATX headings ("## Title") are read, outside fenced code.
func Anchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(blankFences(text), "\n") {
		title, ok := headingText(line)
		if !ok {
			continue
		}
		slug := Slug(title)
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

var atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)

func headingText(line string) (string, bool) {
	m := atxHeading.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// A link inside a heading counts by its text: "## See [TLS](tls.md)" is
// "see-tls".
var headingLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// Slug is GitHub's anchor for a heading's text: lower case, every character
// that is not a letter, a digit, a space, "-" or "_" removed, spaces made
// "-". Markup goes with the punctuation ("`spec.config`" is "specconfig").
func Slug(title string) string {
	title = headingLink.ReplaceAllString(title, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// blankFences blanks the lines of fenced code blocks (``` or ~~~), keeping
// the line count, so that a "# comment" in a shell example is no heading.
func blankFences(text string) string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		if fence == "" {
			if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
				fence = trimmed[:3]
				lines[i] = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, fence) {
			fence = ""
		}
		lines[i] = ""
	}
	return strings.Join(lines, "\n")
}

// blankCode blanks fenced blocks and code spans, keeping newlines so that
// line numbers stay right. A code span opens with a run of backticks and
// closes at the next run of the same length; an unclosed run is text.
func blankCode(text string) string {
	b := []byte(blankFences(text))
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := run(b, i)
		end := -1
		for j := i + n; j < len(b); {
			if b[j] != '`' {
				j++
				continue
			}
			if m := run(b, j); m == n {
				end = j + m
				break
			} else {
				j += m
			}
		}
		if end < 0 {
			i += n
			continue
		}
		for k := i; k < end; k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
		i = end
	}
	return string(b)
}

func run(b []byte, i int) int {
	n := 0
	for i+n < len(b) && b[i+n] == '`' {
		n++
	}
	return n
}
