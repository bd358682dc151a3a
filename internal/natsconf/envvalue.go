package natsconf

import (
	"fmt"
	"strings"

	"github.com/nats-io/nats-server/v2/conf"
)

// bcryptPrefix is the one '$' start nats-server reads as text, not as a
// variable (parse.go in nats-server's conf package).
const bcryptPrefix = "$2a$"

// CheckEnvString reports why nats-server would not read value, held in an
// environment variable that nats.conf refers to, as that very string. The
// server lexes such a value as config: "0123" becomes a number, "yes" a
// bool, "a,b" a syntax error and "abc," the string "abc". Asking its own
// parser is the only faithful check.
//
// The value comes from a Secret a tenant wrote, so the parser must not reach
// outside the string. The include directive would open a file in the
// operator's process ("x\ninclude /dev/zero" reads without bound), and it
// needs the word include (in any case: the lexer folds keys with
// strings.ToLower), so a value holding that word is refused before any
// parsing. That costs the rare password that spells it; in exchange the
// check provably reads nothing. A value starting with '$' names a variable
// the parser would look up in the operator's own environment; nats-server
// reads it back as another string anyway, so it is refused up front with a
// clearer message. Messages describe the problem, never the value.
func CheckEnvString(value string) error {
	if value == "" {
		return fmt.Errorf("the value is empty")
	}
	if strings.Contains(strings.ToLower(value), "include") {
		return fmt.Errorf("it contains the word include, which nats-server may read as a directive to load a file")
	}
	if strings.HasPrefix(value, "$") && !strings.HasPrefix(value, bcryptPrefix) {
		return fmt.Errorf("it starts with $, which nats-server reads as a variable; use a value that starts with a letter")
	}
	parsed, err := conf.Parse("v: " + value)
	if err != nil {
		return fmt.Errorf("nats-server cannot parse it")
	}
	switch got := parsed["v"].(type) {
	case string:
		if got == value {
			return nil
		}
		return fmt.Errorf("nats-server reads it as a different string")
	default:
		return fmt.Errorf("nats-server reads it as a %T, not a string; use a value that starts with a letter", got)
	}
}
