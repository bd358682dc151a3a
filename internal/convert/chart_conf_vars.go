package convert

import (
	"fmt"
	"strings"
)

// nats.conf's variables ($NAME) are looked up in the blocks around the
// reference and, when none defines the name, in the environment of the
// process that parses (nats-server's conf package falls back to
// os.LookupEnv). Parsed here, that process is the operator or whoever
// runs `kubenats convert`: a tenant's `k: $AWS_SECRET_ACCESS_KEY` would
// copy the operator's environment into the tenant's NatsCluster. The
// parser cannot be told to skip the environment, so it is never reached:
// every name the text can refer to is defined ahead of it with a marker
// value (undefinedMarker and the name), at the top level, the outermost
// scope. A name
// the text defines itself still wins (an inner block is searched first,
// and a later top-level definition overwrites the marker), and a marker
// found in the parsed values is a reference to a name the text never
// defined: refused, named by its key path.

// undefinedMarker begins the value of a name nats.conf refers to and does
// not define; the name follows. It cannot be written in a single-quoted string's raw text by
// accident; a text that spells it is refused as referring to an undefined
// name, which costs nothing but that text.
const undefinedMarker = "\x01kubenats: undefined variable\x01"

// variableEnds are the characters that end an unquoted value in
// nats-server's lexer (lexString: new lines, ';', ',', ']', '}', blanks,
// the single quote, and NUL, which it reads as the end of input), and the
// backslash, after which the value is a string with escapes, not a
// variable. The text of a variable reference is '$' and everything up to
// the first of them, as the lexer takes it.
const variableEnds = "\n\r;,]} \t'\x00\\"

// referencedNames is every name a '$' in text can stand for, in order of
// first appearance: the run of characters after each '$' up to the first
// of variableEnds. It is a superset of the lexer's references (a '$' in a
// quoted string, a comment or the middle of a word yields a name too,
// which only defines a marker nothing reads); what matters is that no
// reference of the lexer's is missed, which the shared set of ends
// guarantees. The empty name is left out: the environment has no
// variable of that name, and the parser refuses the reference.
//
// The names are bounded by limits, as the tree is: at most limits.values
// names, and limits.bytes of them read in all, each '$' counted. The
// bound is on what is read, not only on what is kept: in "$a$a$a..."
// every '$' begins a name that runs to the end, so the names of a text
// without bounds would be its length squared.
func referencedNames(text string, limits confLimits) ([]string, error) {
	var names []string
	seen := map[string]bool{}
	read := 0
	for rest := text; ; {
		i := strings.IndexByte(rest, '$')
		if i < 0 {
			return names, nil
		}
		rest = rest[i+1:]
		end := strings.IndexAny(rest, variableEnds)
		if end < 0 {
			end = len(rest)
		}
		read += end
		if read > limits.bytes {
			return nil, fmt.Errorf("nats.conf's variable references ($NAME) are too long for kubenats: more than %d bytes of names", limits.bytes)
		}
		if name := rest[:end]; name != "" && !seen[name] {
			if len(names) == limits.values {
				return nil, fmt.Errorf("nats.conf refers to more than %d variables ($NAME)", limits.values)
			}
			seen[name] = true
			names = append(names, name)
		}
	}
}

// markerDefinitions is one line that defines each of names, except those
// defined already, as undefinedMarker followed by the name: single-quoted
// keys and strings, which take every character a name can hold (no name
// holds a single quote, a new line or NUL).
func markerDefinitions(names []string, defined map[string]bool) string {
	var b strings.Builder
	for _, name := range names {
		if defined[name] {
			continue
		}
		b.WriteString("'" + name + "': '" + undefinedMarker + name + "'; ")
	}
	return b.String()
}
