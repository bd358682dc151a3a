package e2e_test

import (
	"strings"
	"testing"
)

// everyReplacedServerWentLameDuck: each server the rollout replaced ran
// the operator's preStop hook as the loopback kubelet runs it, as written
// (`nats-server --signal ldm=<pid file>` in the container), and entered
// lame duck mode before it stopped; no hook failed.
func everyReplacedServerWentLameDuck(t *testing.T, f *formed, replaced []string) {
	t.Helper()
	for _, pod := range replaced {
		if log := cluster.ServerLog(f.NS, pod); !strings.Contains(log, "Entering lame duck mode") {
			t.Errorf("replaced server %s never entered lame duck mode:\n%s", pod, lastLines(log, 20))
		}
	}
	for _, line := range strings.Split(cluster.KubeletLog(), "\n") {
		if strings.Contains(line, f.NS+"/") && strings.Contains(line, "FailedPreStopHook") {
			t.Errorf("a preStop hook failed: %s", line)
		}
	}
}
