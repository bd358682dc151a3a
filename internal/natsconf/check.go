package natsconf

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// envRef matches an unquoted $NAME reference as Render writes it.
var envRef = regexp.MustCompile(`\$[A-Z_][A-Z0-9_]*\b`)

// routeURLsSuffix ends the name of an environment variable that holds an
// array of URLs (Cluster.RouteURLs).
const routeURLsSuffix = "_URLS"

// envListRef matches a reference to such a variable; the check stands in an
// empty array for it.
var envListRef = regexp.MustCompile(`\$[A-Z_][A-Z0-9_]*` + routeURLsSuffix + `\b`)

// checkPlaceholder stands in for every secret: letters only, so nats-server
// reads it as a string, as it will read the real generated values.
const checkPlaceholder = "kubenatsCheckPlaceholder"

// Check renders c and runs the result through nats-server's own option
// processing, the same the server runs at start. A typo or a value of the
// wrong type in the passthrough would otherwise reach the pods and keep every
// server from starting; here it becomes an error the user can read.
// Environment references are replaced by a placeholder, so Check needs no
// environment and reads no secret.
func (c *Config) Check() error {
	text, err := c.forCheck().Render()
	if err != nil {
		return err
	}
	return CheckRendered(text)
}

// forCheck is c without the files the pods mount (the included users.conf,
// whose variables the check stands in a placeholder for, and the
// certificates): their paths
// exist only in the pod (nats-server would open them), and the tls blocks
// are the operator's own, checked by validateTLS. An https monitoring port
// becomes a plain one, which needs no certificate.
func (c *Config) forCheck() *Config {
	out := *c
	out.TLS, out.Include = nil, ""
	if out.HTTPSPort != 0 {
		out.HTTPPort, out.HTTPSPort = out.HTTPSPort, 0
	}
	if c.Cluster != nil {
		cl := *c.Cluster
		cl.TLS = nil
		out.Cluster = &cl
	}
	return &out
}

// CheckRendered is Check for a file Render already wrote, so that a caller
// holding the text does not render it twice.
//
// It never makes nats-server open a file, so that no spec can make the
// operator read one (`operator: /dev/zero` would read without bound).
// nats-server's option processing opens files in two ways, and both are
// shut off before it runs:
//
//   - the include directive, followed by the parser itself: Render never
//     writes one (values are quoted, and a key spelled include is quoted),
//     and refuseDirectives refuses a text that has one all the same;
//   - keys whose processing reads a file or a directory (operator, resolver,
//     tls of a listener, ...): the passthrough allow-list lists none, and
//     refuseFileKeys refuses any of them that does not come from the
//     operator's own Config fields.
func CheckRendered(text []byte) error {
	if err := refuseDirectives(text); err != nil {
		return err
	}
	text = envListRef.ReplaceAll(text, []byte(`[]`))
	text = envRef.ReplaceAll(text, []byte(`"`+checkPlaceholder+`"`))
	if err := refuseFileKeys(text); err != nil {
		return err
	}
	opts := &server.Options{}
	if err := opts.ProcessConfigString(string(text)); err != nil {
		return fmt.Errorf("nats-server rejects the configuration: %w%s", err, quoteLine(text, err))
	}
	return nil
}

// errPosition finds the ":line:column:" nats-server puts in its errors.
var errPosition = regexp.MustCompile(`:(\d+):\d+:`)

// quoteLine returns the line an error points at, since nats-server's own
// message sometimes names only a position ("interface conversion" for a
// value of the wrong type).
func quoteLine(text []byte, err error) string {
	m := errPosition.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	n, _ := strconv.Atoi(m[1])
	lines := strings.Split(string(text), "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	return fmt.Sprintf(" (at %q)", strings.TrimSpace(lines[n-1]))
}
