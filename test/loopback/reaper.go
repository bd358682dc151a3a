package loopback

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// reaper is a small shell process that outlives the test process only to
// kill what it started. Pdeathsig covers the processes started here, but not
// etcd and kube-apiserver, which envtest starts, and a test binary that hits
// its -timeout exits without running any cleanup. The reaper learns each
// process group on its stdin ("+pgid", "-pgid"), and scratch directories
// ("!path") and, when stdin reaches end of file because the test process is
// gone, SIGKILLs the groups still listed and removes the directories
// (etcd's data is large; the cluster's own logs are kept for a post-mortem).
// Its own process group keeps a Ctrl-C meant for the test from killing it
// first.
type reaper struct {
	mu    sync.Mutex
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// reaperScript keeps the list in the shell itself, no subprocess per line.
const reaperScript = `
live=" "
dirs=()
forget() { kept=" "; for g in $live; do [ "$g" = "$1" ] || kept="$kept$g "; done; live=$kept; }
while read -r line; do
  case $line in
    +*) live="$live${line#+} " ;;
    -*) forget "${line#-}" ;;
    !*) dirs+=("${line#!}") ;;
  esac
done
for g in $live; do kill -KILL -- "-$g" 2>/dev/null; done
for d in "${dirs[@]}"; do rm -rf -- "$d"; done
`

func startReaper() (*reaper, error) {
	// bash, not sh: dash's kill cannot signal a process group.
	bash, err := exec.LookPath("bash")
	if err != nil {
		return nil, fmt.Errorf("the reaper needs bash: %w", err)
	}
	cmd := exec.Command(bash, "-c", reaperScript)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the reaper: %w", err)
	}
	return &reaper{cmd: cmd, stdin: stdin}, nil
}

// watch adds a process group to kill should the test process die.
func (r *reaper) watch(pgid int) { r.send("+" + strconv.Itoa(pgid)) }

// forget removes a group that has ended, so that its id, once reused by the
// system, is never killed.
func (r *reaper) forget(pgid int) { r.send("-" + strconv.Itoa(pgid)) }

// removeAtExit adds a scratch directory to remove when the reaper ends: a
// directory in the system's temporary directory, never anything else.
func (r *reaper) removeAtExit(dir string) {
	tmp := filepath.Clean(os.TempDir()) + string(filepath.Separator)
	if clean := filepath.Clean(dir); strings.HasPrefix(clean, tmp) && !strings.ContainsAny(clean, "\n") {
		r.send("!" + clean)
	}
}

func (r *reaper) send(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stdin != nil {
		_, _ = io.WriteString(r.stdin, line+"\n")
	}
}

// stop ends the reaper after everything it watched was stopped: whatever
// is still listed is killed by it on the way out.
func (r *reaper) stop() {
	r.mu.Lock()
	stdin := r.stdin
	r.stdin = nil
	r.mu.Unlock()
	if stdin != nil {
		_ = stdin.Close()
		_ = r.cmd.Wait()
	}
}

// childrenNamed are the ids of this process's children whose command name
// is one of names: how the processes envtest starts are found.
func childrenNamed(names ...string) []int {
	self := os.Getpid()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // ended meanwhile
		}
		// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
		s := string(data)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		fields := strings.Fields(s[close+1:])
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		pid, _ := strconv.Atoi(strings.TrimSpace(s[:open]))
		comm := s[open+1 : close]
		for _, n := range names {
			if ppid == self && comm == n {
				out = append(out, pid)
			}
		}
	}
	return out
}
