package natsconf

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats-server/v2/conf"
)

// fileReadingKeys are the top-level keys whose processing in nats-server
// v2.15 (server/opts.go) opens a file or a directory in the process that
// runs it: operator JWTs, resolver directories, TLS certificates of
// listeners and bridges, the OCSP cache. The operator writes none of them
// itself today. A Config field that comes to write one (the client
// listener's tls block, say) takes it off this list, and must be a field
// whose paths the operator sets, never the tenant.
var fileReadingKeys = []string{
	"operator", "operators", "root", "roots", "root_operator", "root_operators",
	"resolver", "account_resolver", "accounts_resolver", "resolver_tls", "resolver_preload",
	"tls", "ocsp_cache", "leafnodes", "leaf", "gateway", "websocket", "ws", "mqtt",
}

// refuseDirectives refuses a text with an include directive. Render writes
// one key per line and quotes every string, so a directive can only be a
// line whose first word is include (in any case, as the lexer folds it).
func refuseDirectives(text []byte) error {
	for n, line := range bytes.Split(text, []byte("\n")) {
		// The lexer takes a bare key followed by white space as a keyword.
		words := strings.Fields(string(line))
		if len(words) > 0 && strings.ToLower(words[0]) == "include" {
			return fmt.Errorf("line %d holds an include directive, which the operator never follows", n+1)
		}
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
