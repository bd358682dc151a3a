package loopback

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReaperKillsWatchedGroups: at end of input, which is what the death
// of the test process looks like to the reaper, it kills the groups it
// watches and spares those it was told to forget, and removes the scratch
// directories it was given.
func TestReaperKillsWatchedGroups(t *testing.T) {
	r, err := startReaper()
	if err != nil {
		t.Fatal(err)
	}
	start := func() *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		return cmd
	}
	watched, forgotten := start(), start()
	r.watch(watched.Process.Pid)
	r.watch(forgotten.Process.Pid)
	r.forget(forgotten.Process.Pid)
	scratch := filepath.Join(t.TempDir(), "etcd-data")
	if err := os.MkdirAll(filepath.Join(scratch, "member"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.removeAtExit(scratch)
	r.stop()

	if _, err := os.Stat(scratch); !os.IsNotExist(err) {
		t.Errorf("scratch directory still there (%v)", err)
	}

	_ = watched.Wait()
	if ws := watched.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("watched process ended with %v, want SIGKILL", watched.ProcessState)
	}
	if err := syscall.Kill(forgotten.Process.Pid, 0); err != nil {
		t.Errorf("forgotten process is gone (%v), want it spared", err)
	}
}
