package main

import "strings"

// code writes s as a Markdown code span, with a fence longer than any run
// of backticks inside it.
func code(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || fence != "`" {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

func quote(s string) string { return "\"" + s + "\"" }

// cell makes text safe inside a table cell: a "|" would end the cell even
// inside a code span (GitHub reads "\|" as a pipe there too).
func cell(s string) string {
	return strings.ReplaceAll(escapeHTML(s), "|", `\|`)
}

// escapeHTML keeps "<name>" of a doc comment from being read as an HTML
// tag, outside code spans only: inside them Markdown shows it as written.
// The "<br>" this program puts between a field's paragraphs is kept.
func escapeHTML(s string) string {
	var b strings.Builder
	inCode := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '`':
			inCode = !inCode
			b.WriteByte(c)
		case c == '<' && !inCode && !strings.HasPrefix(s[i:], "<br>"):
			b.WriteString("&lt;")
		case c == '>' && !inCode && !(i >= 3 && s[i-3:i+1] == "<br>"):
			b.WriteString("&gt;")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
