package natsconf

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Variables is a file of top-level nats.conf variables, for a config to
// include and refer to as $NAME: the way the operator hands the servers
// values that must change without a restart (an environment variable is
// read once, at start). Each value is a double-quoted string, so it reaches
// nats-server exactly as given, '$', '#' and the word include included:
// inside quotes none of them means anything to the lexer.
type Variables map[string]string

// Render writes the variables sorted by name. Names follow Env's rule
// ([A-Z_][A-Z0-9_]*); a value with a control character other than \n and
// \t, or invalid UTF-8, is an error that never quotes the value (it may be
// a password).
func (v Variables) Render() ([]byte, error) {
	w := &confWriter{}
	w.comment(header)
	for _, name := range slices.Sorted(maps.Keys(v)) {
		if !isEnvName(name) {
			return nil, fmt.Errorf("variable name %q: must match [A-Z_][A-Z0-9_]*", name)
		}
		quoted, err := quoteString(v[name])
		if err != nil {
			return nil, fmt.Errorf("variable %s: the value cannot be written: %s", name, redactQuoteError(err))
		}
		w.keyValue(name, quoted)
	}
	return w.bytes(), nil
}

// redactQuoteError keeps what quoteString says of a value, never the value.
func redactQuoteError(err error) string {
	switch msg := err.Error(); {
	case strings.Contains(msg, "UTF-8"):
		return "it is not valid UTF-8"
	case strings.Contains(msg, "control character"):
		return "it holds a control character"
	}
	return "it holds an unsupported character"
}
