package main

import (
	"go/ast"
	"strings"
)

// splitComment separates a comment group into its prose and its markers
// (lines starting with "+", as controller-gen reads them). The prose comes
// back as paragraphs, each one line, since Go wraps comments where Markdown
// would not.
func splitComment(groups ...*ast.CommentGroup) (paragraphs []string, markers []marker) {
	var para []string
	flush := func() {
		if len(para) > 0 {
			paragraphs = append(paragraphs, strings.Join(para, " "))
			para = nil
		}
	}
	for _, g := range groups {
		if g == nil {
			continue
		}
		for _, c := range g.List {
			line := strings.TrimPrefix(c.Text, "//")
			line = strings.TrimPrefix(line, " ")
			trimmed := strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(trimmed, "+"):
				flush()
				markers = append(markers, parseMarker(trimmed[1:]))
			case trimmed == "":
				flush()
			case strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "  "):
				// An indented line is preformatted in Go doc; kept as its own
				// line so that a list or an example is not run together.
				flush()
				para = append(para, trimmed)
				flush()
			default:
				para = append(para, trimmed)
			}
		}
		flush()
	}
	return paragraphs, markers
}
