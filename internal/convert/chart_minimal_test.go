package convert

import (
	"os"
	"strings"
	"testing"
)

// minimalConf is the chart's own nats.conf, cut to what the conversion
// carries without a loss.
const minimalConf = `server_name: $SERVER_NAME
port: 4222
http_port: 8222
pid_file: /var/run/nats/nats.pid
jetstream {
  max_file_store: 1Gi
  store_dir: /data
}
`

// minimalChart is testdata/chart-minimal.yaml with natsConf as its
// nats.conf and env (YAML list items, indented as the nats container's
// env) added to the nats container.
func minimalChart(t testing.TB, natsConf, env string) string {
	t.Helper()
	data, err := os.ReadFile("testdata/chart-minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var block strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(natsConf, "\n"), "\n") {
		block.WriteString("    " + line + "\n")
	}
	text := strings.Replace(string(data), "NATS_CONF\n", block.String(), 1)
	return strings.Replace(text, "CONTAINER_ENV\n", env, 1)
}

// TestMinimalChartConverts: the fixture itself carries without a loss,
// so that the tests built on it see only what they add.
func TestMinimalChartConverts(t *testing.T) {
	res, err := Chart(documents(t, minimalChart(t, minimalConf, "")), "default")
	if err != nil || len(res.Lost) != 0 || len(res.Objects) != 1 {
		t.Fatalf("Chart: %v, lost %v, %d objects", err, res.Lost, len(res.Objects))
	}
}
