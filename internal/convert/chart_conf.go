package convert

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/nats-io/nats-server/v2/conf"
	corev1 "k8s.io/api/core/v1"
)

// envName is a variable nats.conf can refer to ($NAME).
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// fromThePod stands for an environment value only a running pod has (a
// field or Secret reference): the translation never needs its value.
const fromThePod = "from-the-pod"

// chartConf reads the chart's nats.conf with nats-server's own parser.
// The chart refers to the container's environment ($SERVER_NAME), which
// nats-server reads from its process; here the nats container's variables
// are defined ahead of the text instead, as the server would find them,
// and every other name the text refers to is defined as undefined
// (chart_conf_vars.go): the parser never reads this process's
// environment. nats.conf that includes other files is refused: they live
// in the pod, and the parser would read files of this machine under their
// names. As natsconf.CheckEnvString does, the word is refused in any case
// (the parser folds keys) and wherever it stands, before any parsing: a
// nats.conf that only spells it in a value is refused too. The parsed
// tree is measured (limits) before anything reads it, and no error quotes
// what nats.conf holds: the operator writes them into the tenant's status.
func chartConf(text string, env []corev1.EnvVar, limits confLimits) (map[string]any, error) {
	if strings.Contains(strings.ToLower(text), "include") {
		return nil, errors.New("nats.conf includes other files (they are in the pod, not in the manifest): carry what they hold by hand")
	}
	// All definitions on one line, so that nats.conf's line n is the
	// parser's n+1.
	var defs strings.Builder
	defined := map[string]bool{}
	for _, e := range env {
		value := e.Value
		if e.ValueFrom != nil || strings.Contains(value, "$(") {
			value = fromThePod
		}
		if !envName.MatchString(e.Name) || strings.ContainsAny(value, "\"\\\n\r\x00") {
			continue
		}
		fmt.Fprintf(&defs, "%s: \"%s\"; ", e.Name, value)
		defined[e.Name] = true
	}
	markers, err := referencedNames(text, limits)
	if err != nil {
		return nil, err
	}
	defs.WriteString(markerDefinitions(markers, defined))
	m, err := conf.Parse(defs.String() + "\n" + text)
	if err != nil {
		return nil, parseError(err)
	}
	for name := range defined {
		delete(m, name)
	}
	for _, name := range markers {
		if s, ok := m[name].(string); ok && s == undefinedMarker+name {
			delete(m, name)
		}
	}
	if err := checkConfTree(m, limits); err != nil {
		return nil, err
	}
	return m, nil
}

// parserLine finds the line in nats-server's parse errors ("Parse error on
// line 3: ...", "... on line 3 can not be found", "config is invalid
// (:3:1)").
var parserLine = regexp.MustCompile(`line (\d+)|\(:(\d+):`)

// parseError says where nats.conf does not parse, without the parser's
// words: they quote the text (a password, a token) at the fault.
func parseError(err error) error {
	m := parserLine.FindStringSubmatch(err.Error())
	if m == nil {
		return errors.New("nats.conf does not parse (nats-server -t -c <file> names the fault)")
	}
	n, _ := strconv.Atoi(m[1] + m[2])
	return fmt.Errorf("nats.conf does not parse at line %d (nats-server -t -c <file> names the fault)", n-1)
}
