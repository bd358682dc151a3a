package convert

import (
	"errors"
	"fmt"
	"regexp"
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
// are defined ahead of the text instead, as the server would find them.
// nats.conf that includes other files is refused: they live in the pod,
// and the parser would read files of this machine under their names. As
// natsconf.CheckEnvString does, the word is refused in any case (the
// parser folds keys) and wherever it stands, before any parsing: a
// nats.conf that only spells it in a value is refused too.
func chartConf(text string, env []corev1.EnvVar) (map[string]any, error) {
	if strings.Contains(strings.ToLower(text), "include") {
		return nil, errors.New("nats.conf includes other files (they are in the pod, not in the manifest): carry what they hold by hand")
	}
	var defs strings.Builder
	for _, e := range env {
		value := e.Value
		if e.ValueFrom != nil || strings.Contains(value, "$(") {
			value = fromThePod
		}
		if !envName.MatchString(e.Name) || strings.ContainsAny(value, "\"\\\n\r") {
			continue
		}
		fmt.Fprintf(&defs, "%s: \"%s\"\n", e.Name, value)
	}
	m, err := conf.Parse(defs.String() + text)
	if err != nil {
		return nil, fmt.Errorf("nats.conf: %w", err)
	}
	for _, e := range env {
		delete(m, e.Name)
	}
	return m, nil
}
