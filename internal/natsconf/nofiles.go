package natsconf

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nats-io/nats-server/v2/conf"
)

// fileReadingKeys are the top-level keys whose processing in nats-server
// v2.15 (server/opts.go) opens a file or a directory in the process that
// runs it: operator JWTs, resolver directories, TLS certificates of
// listeners and bridges, the OCSP cache. The operator's own tls blocks
// (Config.TLS, Cluster.TLS), whose paths it sets itself and never the
// tenant, are taken out before the check (Config.forCheck), so the check
// never sees one either. websocket and mqtt are not listed: the operator
// writes them, and their tls blocks, like the client's, are taken out
// before the check; a tls left in one would meet webSocketRules and
// mqttRules, which know no tls, and be refused all the same. Their
// aliases (ws) are listed: the operator never writes them.
var fileReadingKeys = []string{
	"operator", "operators", "root", "roots", "root_operator", "root_operators",
	"resolver", "account_resolver", "accounts_resolver", "resolver_tls", "resolver_preload",
	"tls", "ocsp_cache", "leafnodes", "leaf", "gateway", "ws",
}

// refuseDirectives refuses a text with anything the lexer could take for
// the include directive: the word include (in any case, as the lexer folds
// keys with strings.ToLower) followed by white space, anywhere. The lexer
// reads a directive only in key position, which this does not try to
// track: refusing the word everywhere is what makes the guard hold for any
// text, not only for what Render writes (Render quotes a key spelled
// include, and a string value that holds "include " is refused here, a
// price worth paying for a check that provably reads nothing).
func refuseDirectives(text []byte) error {
	lowered := strings.ToLower(string(text))
	for i := strings.Index(lowered, "include"); i >= 0; {
		next, _ := utf8.DecodeRuneInString(lowered[i+len("include"):])
		if unicode.IsSpace(next) {
			return errors.New("the configuration holds the word include, which nats-server reads as a directive to load a file; the operator never follows one")
		}
		j := strings.Index(lowered[i+1:], "include")
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return nil
}

// refuseFileKeys refuses a text that sets a top-level key whose processing
// would open a file. The text has no include directive (refuseDirectives
// ran first), so parsing it reads nothing but the text.
func refuseFileKeys(text []byte) error {
	parsed, err := conf.Parse(string(text))
	if err != nil {
		return fmt.Errorf("nats-server rejects the configuration: %w", err)
	}
	for key := range parsed {
		// strings.ToLower, not FoldKey: this is nats-server's own folding.
		if isFileReadingKey(strings.ToLower(key)) {
			return fmt.Errorf("setting %q makes nats-server read a file; kubenats does not allow it", key)
		}
	}
	return nil
}

func isFileReadingKey(folded string) bool {
	return slices.Contains(fileReadingKeys, folded)
}
