package natsconf

import (
	"fmt"
	"regexp"

	"github.com/nats-io/nats-server/v2/conf"
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

// Check renders c and holds the result to what nats-server's option
// processing accepts at start (option_rules.go). A typo or a value of the
// wrong type in the passthrough would otherwise reach the pods and keep
// every server from starting; here it becomes an error the user can read.
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
	// The trust block is the operator's own (validated by Trust.validate)
	// and names the resolver's directory, which exists only in the pod.
	out.TLS, out.AllowNonTLS, out.Include, out.Trust, out.MoreIncludes = nil, false, "", nil, nil
	c.withoutTopologyFiles(&out)
	if out.HTTPSPort != 0 {
		out.HTTPPort, out.HTTPSPort = out.HTTPSPort, 0
	}
	// The listeners' tls blocks go too; WebSocket then says no_tls, which
	// nats-server would otherwise ask for.
	if ws := c.WebSocket; ws != nil && ws.TLS != nil {
		w := *ws
		w.TLS, w.NoTLS = nil, true
		out.WebSocket = &w
	}
	if m := c.MQTT; m != nil && m.TLS != nil {
		mm := *m
		mm.TLS = nil
		out.MQTT = &mm
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
// It runs no nats-server code but its config parser (the conf package),
// which opens a file only for the include directive: refuseDirectives
// refuses a text that has one, before parsing. What the parser returns is
// then held to the rules of option_rules.go, which know no option that
// reads a file (operator, resolver, tls, ...: refuseFileKeys names them
// at the top level, where a tenant's passthrough would put them).
//
// The rules are checked against nats-server's own option processing in
// tests, never here: the operator does not link the server.
func CheckRendered(text []byte) error {
	if err := refuseDirectives(text); err != nil {
		return err
	}
	text = ForServer(text)
	if err := refuseFileKeys(text); err != nil {
		return err
	}
	parsed, err := conf.Parse(string(text))
	if err != nil {
		return fmt.Errorf("nats-server rejects the configuration: %w", err)
	}
	if err := checkOptions(parsed); err != nil {
		return fmt.Errorf("nats-server would not load the configuration: %w", err)
	}
	return nil
}

// ForServer is text as the check reads it: each reference to an
// environment variable replaced by what the check stands in for it (an
// empty array for a list of routes, a placeholder string for any other).
func ForServer(text []byte) []byte {
	text = envListRef.ReplaceAll(text, []byte(`[]`))
	return envRef.ReplaceAll(text, []byte(`"`+checkPlaceholder+`"`))
}
