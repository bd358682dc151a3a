package natsconf

import (
	"fmt"

	"github.com/nats-io/nats-server/v2/conf"
)

// CheckEnvString reports why nats-server would not read value, held in an
// environment variable that nats.conf refers to, as that very string. The
// server lexes such a value as config: "0123" becomes a number, "yes" a
// bool, "a,b" a syntax error and "abc," the string "abc". Asking its own
// parser is the only faithful check.
func CheckEnvString(value string) error {
	if value == "" {
		return fmt.Errorf("the value is empty")
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
