package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/rbac"
)

// The operator as a process of its own, for the tests that kill it: the
// binary a Deployment runs (cmd/kubenats, built once per run), with its
// defaults, authenticated as its ServiceAccount. SIGKILL ends it where it
// stands: no graceful shutdown, no deferred cleanup, nothing in flight
// finished. Its log goes to the operator's log, which the leak scan reads.

// operatorBinary builds cmd/kubenats once per run.
var operatorBinary = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(cluster.Dir, "kubenats")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/kubenats")
	cmd.Dir = cluster.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/kubenats: %v\n%s", err, out)
	}
	return bin, nil
})

type operatorProcess struct {
	bin, kubeconfig string
	log             *os.File

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	killing bool
	// died is set when a process ended by itself: a crash.
	died error
}

// runOperatorProcess stops the operator this package runs in-process and
// runs the binary in its place until the test ends; the in-process one
// comes back then.
func runOperatorProcess(t *testing.T) *operatorProcess {
	t.Helper()
	bin, err := operatorBinary()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := cluster.UserKubeconfig("operator-process", rbac.User, rbac.Groups)
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.OpenFile(filepath.Join(cluster.Dir, "logs", "operator.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := e2ekit.StopOperator(); err != nil {
		t.Fatalf("stopping the in-process operator: %v", err)
	}
	p := &operatorProcess{bin: bin, kubeconfig: kubeconfig, log: log}
	t.Cleanup(func() {
		p.kill()
		_ = log.Close()
		if err := p.crashed(); err != nil {
			t.Error(err)
		}
		if err := e2ekit.StartOperator(); err != nil {
			t.Errorf("starting the in-process operator again: %v", err)
		}
	})
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	t.Logf("the operator runs as its binary, process %d, in place of the in-process one", p.pid())
	return p
}

func (p *operatorProcess) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

func (p *operatorProcess) start() error {
	// With leader election, as the install runs it: a restarted operator
	// waits for the dead one's lease to lapse (a short one here, to keep
	// the suite's time) before it acts.
	cmd := exec.Command(p.bin, "manager", "--kubeconfig", p.kubeconfig,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		"--leader-elect", "--leader-election-namespace", rbac.Namespace, "--leader-election-lease-duration", "4s")
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", p.bin, err)
	}
	exited := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.exited, p.killing = cmd, exited, false
	p.mu.Unlock()
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		if !p.killing && p.died == nil {
			p.died = fmt.Errorf("the operator process %d exited by itself: %v", cmd.Process.Pid, err)
		}
		p.mu.Unlock()
		close(exited)
	}()
	return nil
}

// kill sends SIGKILL and returns once the process is gone.
func (p *operatorProcess) kill() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.killing, p.cmd = true, nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// restart kills the operator and starts another, which knows only what it
// observes.
func (p *operatorProcess) restart() error {
	p.kill()
	if err := p.crashed(); err != nil {
		return err
	}
	return p.start()
}

// crashed is the error of a process that ended by itself, nil if none did.
func (p *operatorProcess) crashed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.died
}
