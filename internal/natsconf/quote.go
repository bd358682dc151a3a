package natsconf

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// quoteString writes s as a nats.conf double-quoted string.
//
// The conf lexer understands only \t \n \r \" \\ and \xHH inside double
// quotes; any other backslash sequence is a parse error, so only those are
// emitted. Quoting is also what keeps "$HOME" literal, "30s" a string rather
// than a number, and "a #b" whole rather than cut at a comment.
//
// Control characters other than newline and tab are refused: they are never
// meaningful in a server setting and would make the file hard to read and
// review. Invalid UTF-8 is refused for the same reason.
func quoteString(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("string %q is not valid UTF-8", s)
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if unicode.IsControl(r) {
				return "", fmt.Errorf("string %q contains control character %U", s, r)
			}
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

// formatKey returns key as it must appear before the separator.
//
// Keys made only of [A-Za-z0-9_] are written bare. Anything else is written
// double-quoted. Quoted keys are taken verbatim by the lexer (no escape
// processing), so a key containing '"' cannot be written at all, and control
// characters are refused as for values.
func formatKey(key string) (string, error) {
	if key == "" {
		return "", fmt.Errorf("empty key")
	}
	// A bare "include" before ` {` would be read as the include directive,
	// which makes nats-server read a file; quoted, it is only a key.
	if isBareKey(key) && !isDirectiveKey(key) {
		return key, nil
	}
	if !utf8.ValidString(key) {
		return "", fmt.Errorf("key %q is not valid UTF-8", key)
	}
	for _, r := range key {
		if r == '"' {
			return "", fmt.Errorf("key %q contains a double quote, which nats.conf cannot express in a key", key)
		}
		if unicode.IsControl(r) {
			return "", fmt.Errorf("key %q contains control character %U", key, r)
		}
	}
	return `"` + key + `"`, nil
}

// isBareKey reports whether key can be written without quotes.
func isBareKey(key string) bool {
	for _, r := range key {
		isWord := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !isWord {
			return false
		}
	}
	return key != ""
}
