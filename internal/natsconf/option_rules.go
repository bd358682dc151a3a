package natsconf

import (
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"
)

// The config check holds a parsed nats.conf to these rules instead of
// running nats-server's option processing in the operator: that would link
// the whole server into the operator (a large share of its binary and
// heap) to check a file the operator wrote itself. Each rule accepts only
// what nats-server v2.15 accepts for that option (processConfigFileLine,
// parseCluster, parseJetStream, parseAuthorization, parseUsers,
// parseAccounts in server/opts.go), and usually less: only the forms Render
// writes. An option with no rule is refused. The rules can never be
// kinder than the server: FuzzCheckRendered runs nats-server's own
// processing on every text CheckRendered accepts, and fails on any it
// refuses (check_differential_test.go).

// rule checks one option's value, as conf.Parse returns it: string, bool,
// int64, float64, []any, map[string]any. path names the option in errors.
type rule func(path string, v any) error

// topLevelRules are the options CheckRendered accepts at the top level,
// keyed as nats-server folds them (strings.ToLower): the ones Render
// writes from the Config's own fields, and the passthrough allow-list.
var topLevelRules = map[string]rule{
	"server_name":            nameWithoutSpace,
	"port":                   port,
	"http_port":              port,
	"https_port":             port,
	"pid_file":               str,
	"lame_duck_duration":     durationAtLeast(minLameDuckDuration),
	"lame_duck_grace_period": durationAtLeast(0),
	"system_account":         str,
	"cluster":                block(clusterRules),
	"jetstream":              block(jetStreamRules),
	"authorization":          block(authorizationRules),
	"accounts":               accounts,
	"server_metadata":        stringMap,
	"websocket":              block(webSocketRules),
	"mqtt":                   block(mqttRules),

	"debug": boolean, "trace": boolean, "trace_verbose": boolean, "trace_headers": boolean,
	"logtime": boolean, "logtime_utc": boolean,
	"max_connections": integer, "max_control_line": intAtMost(math.MaxInt32),
	"max_payload": intAtMost(math.MaxInt32), "max_pending": integer,
	"max_subscriptions": integer, "max_sub_tokens": intBetween(1, math.MaxUint8),
	"max_traced_msg_len": integer, "max_closed_clients": integer,
	"ping_interval": duration, "ping_max": integer, "write_deadline": duration,
	"write_timeout":          oneOf("default", "close", "retry"),
	"no_fast_producer_stall": boolean,
	"connect_error_reports":  integer, "reconnect_error_reports": integer,
	"disable_sublist_cache": boolean,
	"server_tags":           stringOrStrings,
}

// clusterRules: the cluster block as Render writes it. No tls (its files
// exist only in the pod; Config.forCheck takes it out).
var clusterRules = map[string]rule{
	"name":          clusterName,
	"port":          port,
	"no_advertise":  boolean,
	"advertise":     str,
	"authorization": block(routeAuthorizationRules),
	"routes":        routeURLs,
}

var routeAuthorizationRules = map[string]rule{"user": str, "password": str}

// jetStreamRules: the jetstream block, sizes as plain byte counts.
var jetStreamRules = map[string]rule{
	"store_dir":        str,
	"max_memory_store": intAtLeast(0),
	"max_file_store":   intAtLeast(0),
	"domain":           str,
	"unique_tag":       str,
}

// authorizationRules: a token, or users (checkUsers checks them across
// blocks).
var authorizationRules = map[string]rule{"token": str, "users": users}

// accountRules: one account of the accounts block.
var accountRules = map[string]rule{"jetstream": oneOf("enabled"), "users": users}

var userRules = map[string]rule{"user": str, "password": str}

// checkOptions checks every top-level option of parsed against its rule.
func checkOptions(parsed map[string]any) error {
	if len(parsed) == 0 {
		return fmt.Errorf("the configuration is empty") // nats-server warns, and a warning fails its load
	}
	if err := block(topLevelRules)("", parsed); err != nil {
		return err
	}
	if err := checkListeners(parsed); err != nil {
		return err
	}
	return checkUsers(parsed)
}

// block is the rule of a map whose keys each have a rule. Keys fold as
// nats-server folds them (strings.ToLower); two keys that fold alike are
// refused, as nats-server would keep whichever its map iteration met last
// (or refuse the pair, as for store_dir).
func block(rules map[string]rule) rule {
	return func(path string, v any) error {
		m, ok := v.(map[string]any)
		if !ok {
			return typeError(path, "a block", v)
		}
		seen := make(map[string]string, len(m))
		for _, k := range sortedKeys(m) {
			folded := strings.ToLower(k)
			where := joinPath(path, k)
			if other, dup := seen[folded]; dup {
				return fmt.Errorf("%s and %s name the same nats-server option", joinPath(path, other), where)
			}
			seen[folded] = k
			check, known := rules[folded]
			if !known {
				return fmt.Errorf("%s is not an option kubenats writes or passes through", where)
			}
			if err := check(where, m[k]); err != nil {
				return err
			}
		}
		return nil
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return fmt.Sprintf("%q", key)
	}
	return fmt.Sprintf("%s.%q", path, key)
}

func typeError(path, want string, v any) error {
	return fmt.Errorf("%s must be %s, not %s", path, want, kindOf(v))
}

// kindOf names a parsed value's kind as a user would.
func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64:
		return "an integer"
	case float64:
		return "a fraction"
	case []any:
		return "an array"
	case map[string]any:
		return "a block"
	case time.Time:
		return "a date"
	}
	return fmt.Sprintf("a %T", v)
}

func str(path string, v any) error {
	if _, ok := v.(string); !ok {
		return typeError(path, "a string", v)
	}
	return nil
}

func boolean(path string, v any) error {
	if _, ok := v.(bool); !ok {
		return typeError(path, "true or false", v)
	}
	return nil
}

func integer(path string, v any) error {
	if _, ok := v.(int64); !ok {
		return typeError(path, "an integer", v)
	}
	return nil
}

func intBetween(lowest, highest int64) rule {
	return func(path string, v any) error {
		n, ok := v.(int64)
		if !ok {
			return typeError(path, "an integer", v)
		}
		if n < lowest || n > highest {
			return fmt.Errorf("%s is %d; nats-server takes %d to %d", path, n, lowest, highest)
		}
		return nil
	}
}

func intAtMost(highest int64) rule  { return intBetween(math.MinInt64, highest) }
func intAtLeast(lowest int64) rule  { return intBetween(lowest, math.MaxInt64) }
func port(path string, v any) error { return intBetween(0, 65535)(path, v) }

// duration: nats-server reads a quoted Go duration; a bare number is read
// as seconds with a warning, and a warning fails the load.
func duration(path string, v any) error {
	_, err := parseDuration(path, v)
	return err
}

func parseDuration(path string, v any) (time.Duration, error) {
	s, ok := v.(string)
	if !ok {
		return 0, typeError(path, `a quoted duration ("30s")`, v)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

func durationAtLeast(lowest time.Duration) rule {
	return func(path string, v any) error {
		d, err := parseDuration(path, v)
		if err == nil && d < lowest {
			err = fmt.Errorf("%s is %s, below nats-server's minimum of %s", path, d, lowest)
		}
		return err
	}
}

func oneOf(allowed ...string) rule {
	return func(path string, v any) error {
		s, ok := v.(string)
		if !ok {
			return typeError(path, "a string", v)
		}
		for _, a := range allowed {
			if s == a {
				return nil
			}
		}
		return fmt.Errorf("%s must be one of %s", path, strings.Join(allowed, ", "))
	}
}

func nameWithoutSpace(path string, v any) error {
	s, ok := v.(string)
	if !ok {
		return typeError(path, "a string", v)
	}
	if strings.Contains(s, " ") {
		return fmt.Errorf("%s contains a space, which nats-server refuses", path)
	}
	return nil
}

func clusterName(path string, v any) error {
	if err := nameWithoutSpace(path, v); err != nil {
		return err
	}
	if v.(string) == reservedClusterName {
		return fmt.Errorf("%s %q is reserved by nats-server", path, reservedClusterName)
	}
	return nil
}

// stringMap: server_metadata's values must all be strings.
func stringMap(path string, v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return typeError(path, "a block", v)
	}
	for _, k := range sortedKeys(m) {
		if err := str(joinPath(path, k), m[k]); err != nil {
			return err
		}
	}
	return nil
}

func stringOrStrings(path string, v any) error {
	if _, ok := v.(string); ok {
		return nil
	}
	return stringArray(path, v)
}

// stringArray is an array of strings.
func stringArray(path string, v any) error {
	a, ok := v.([]any)
	if !ok {
		return typeError(path, "an array of strings", v)
	}
	for i, e := range a {
		if err := str(fmt.Sprintf("%s[%d]", path, i), e); err != nil {
			return err
		}
	}
	return nil
}

// routeURLs: an array of URLs, none twice (nats-server warns of a
// duplicate, and a warning fails the load).
func routeURLs(path string, v any) error {
	if err := stringArray(path, v); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, e := range v.([]any) {
		u := e.(string)
		if seen[u] {
			return fmt.Errorf("%s[%d] repeats a route", path, i)
		}
		seen[u] = true
		if _, err := url.Parse(strings.TrimSpace(u)); err != nil {
			return fmt.Errorf("%s[%d] is not a URL", path, i)
		}
	}
	return nil
}

// users: an array of user blocks, each with a user name.
func users(path string, v any) error {
	a, ok := v.([]any)
	if !ok {
		return typeError(path, "an array of users", v)
	}
	for i, e := range a {
		where := fmt.Sprintf("%s[%d]", path, i)
		if err := block(userRules)(where, e); err != nil {
			return err
		}
		if userName(e.(map[string]any)) == "" {
			return fmt.Errorf("%s has no user name", where)
		}
	}
	return nil
}

// accounts: a block of account blocks; $G is nats-server's global
// account and may not be declared.
func accounts(path string, v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return typeError(path, "a block", v)
	}
	for _, name := range sortedKeys(m) {
		where := joinPath(path, name)
		if name == globalAccountName {
			return fmt.Errorf("%s is nats-server's reserved global account", where)
		}
		if err := block(accountRules)(where, m[name]); err != nil {
			return err
		}
	}
	return nil
}
