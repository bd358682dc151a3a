package natsconf

import "fmt"

// valueKind says how a Value is written.
type valueKind uint8

const (
	kindUnset valueKind = iota
	kindLiteral
	kindEnv
)

// Value is a scalar that is either a literal string or a reference to an
// environment variable. The zero Value means "not set".
type Value struct {
	kind valueKind
	text string // the literal, or the variable name without '$'
}

// String returns a literal string value. It is written double-quoted, so its
// content (including any '$') reaches nats-server unchanged.
func String(s string) Value {
	return Value{kind: kindLiteral, text: s}
}

// Env returns a reference to the environment variable name. It is written
// unquoted as $NAME and expanded by nats-server when it parses the file.
// The name must match [A-Z_][A-Z0-9_]*; Render reports an error otherwise
// (Env itself cannot fail, so Config literals stay easy to write).
func Env(name string) Value {
	return Value{kind: kindEnv, text: name}
}

// IsZero reports whether v holds nothing to write: the zero Value or an empty
// literal. An empty literal counts as unset so that callers can pass
// String(spec.Field) without first checking for "".
func (v Value) IsZero() bool {
	return v.kind == kindUnset || (v.kind == kindLiteral && v.text == "")
}

// isEnv reports whether v is an environment variable reference.
func (v Value) isEnv() bool {
	return v.kind == kindEnv
}

// format returns v as nats.conf text.
func (v Value) format() (string, error) {
	switch v.kind {
	case kindEnv:
		if !isEnvName(v.text) {
			return "", fmt.Errorf("invalid environment variable name %q: must match [A-Z_][A-Z0-9_]*", v.text)
		}
		return "$" + v.text, nil
	case kindLiteral:
		return quoteString(v.text)
	}
	return "", fmt.Errorf("value is not set")
}

// isEnvName reports whether name matches [A-Z_][A-Z0-9_]*. Upper case only:
// nats-server resolves $NAME against already-parsed block keys before the
// environment, and every key this package writes itself is lower case, so an
// upper-case name can only be shadowed by an account name (checked in
// validate_auth.go).
func isEnvName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r == '_', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
