package realnode

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sweep removes everything a real node with its directory at dir made,
// whether that node is stopping or was killed long ago: it knows nothing
// of the node's processes but what /proc, /sys and the kernel say. Each
// step goes on after a failure of another; the failures are returned
// together. report is told what was found.
func sweep(dir string, report func(format string, args ...any)) error {
	var errs []string
	fail := func(err error) {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	// Processes first, so that nothing makes more: every program whose
	// command line names the directory (kubelet, containerd and its shims,
	// kube-proxy, kube-scheduler, CoreDNS, the API server and the
	// controller manager), then every process in a pod's cgroup.
	if n := killNaming(dir); n > 0 {
		report("killed %d node processes", n)
	}
	n, err := killCgroups()
	fail(err)
	if n > 0 {
		report("killed %d container processes", n)
	}
	if n := unmountUnder(dir); n > 0 {
		report("unmounted %d mounts", n)
	}
	fail(removeCgroups())
	fail(deleteBridge())
	for _, tool := range []string{"iptables", "ip6tables"} {
		fail(removeChains(tool, report))
	}
	fail(restoreSysctls(dir, report))
	if err := os.RemoveAll(dir); err != nil {
		fail(fmt.Errorf("removing %s: %w", dir, err))
	}
	if len(errs) > 0 {
		return fmt.Errorf("cleaning up the real node: %s", strings.Join(errs, "; "))
	}
	return nil
}

// killNaming SIGKILLs every process but this one whose command line names
// dir or a path in it, until none is left.
func killNaming(dir string) int {
	self := os.Getpid()
	killed := map[int]bool{}
	for round := 0; round < 50; round++ {
		found := false
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self {
				continue
			}
			cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err != nil || !(bytes.Contains(cmdline, []byte(dir+"/")) || bytes.Contains(cmdline, []byte(dir+"\x00"))) {
				continue
			}
			if isZombie(pid) {
				continue
			}
			found = true
			killed[pid] = true
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if !found {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return len(killed)
}

func isZombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}

// cgroupDirs are the node's cgroup root in every hierarchy mounted under
// /sys/fs/cgroup (each v1 controller, the unified one, or v2's single
// tree), whether or not they exist.
func cgroupDirs() []string {
	var out []string
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return []string{filepath.Join("/sys/fs/cgroup", cgroupRoot)}
	}
	entries, _ := os.ReadDir("/sys/fs/cgroup")
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join("/sys/fs/cgroup", e.Name(), cgroupRoot))
		}
	}
	return out
}

// killCgroups SIGKILLs every process in a cgroup below the node's root
// until they are gone (a container's processes outlive its shim).
func killCgroups() (int, error) {
	killed := map[int]bool{}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var pids []int
		for _, root := range cgroupDirs() {
			_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				if err != nil || !d.IsDir() {
					return nil
				}
				data, _ := os.ReadFile(filepath.Join(p, "cgroup.procs"))
				for _, f := range strings.Fields(string(data)) {
					if pid, err := strconv.Atoi(f); err == nil && !isZombie(pid) {
						pids = append(pids, pid)
					}
				}
				return nil
			})
		}
		if len(pids) == 0 {
			return len(killed), nil
		}
		if time.Now().After(deadline) {
			return len(killed), fmt.Errorf("processes %v stay in the node's cgroups", pids)
		}
		for _, pid := range pids {
			killed[pid] = true
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// unmountUnder detaches every mount at or below dir, deepest first
// (overlay roots, secrets' tmpfs, network namespaces, the kubelet's own
// shared bind mount), until none is left.
func unmountUnder(dir string) int {
	n := 0
	for round := 0; round < 10; round++ {
		var points []string
		data, _ := os.ReadFile("/proc/self/mountinfo")
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 5 {
				continue
			}
			p := unescapeMount(f[4])
			if p == dir || strings.HasPrefix(p, dir+"/") {
				points = append(points, p)
			}
		}
		if len(points) == 0 {
			break
		}
		slices.Reverse(points)
		for _, p := range points {
			if syscall.Unmount(p, syscall.MNT_DETACH) == nil {
				n++
			}
		}
	}
	return n
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeCgroups removes the node's cgroup directories, deepest first.
func removeCgroups() error {
	var left []string
	for _, root := range cgroupDirs() {
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		slices.Reverse(dirs)
		for _, d := range dirs {
			if err := syscall.Rmdir(d); err != nil && !os.IsNotExist(err) {
				left = append(left, d)
			}
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("cgroups left: %v", left)
	}
	return nil
}

func deleteBridge() error {
	if _, err := os.Stat("/sys/class/net/" + bridgeName); err != nil {
		return nil
	}
	if out, err := exec.Command("ip", "link", "del", bridgeName).CombinedOutput(); err != nil {
		return fmt.Errorf("ip link del %s: %v: %s", bridgeName, err, out)
	}
	return nil
}

// ownChain: the chains the kubelet, kube-proxy and the CNI plugins make.
func ownChain(name string) bool {
	return strings.HasPrefix(name, "KUBE-") || strings.HasPrefix(name, "CNI-")
}

// removeChains deletes, in every table, the rules of the built-in chains
// that jump to the node's chains, then flushes and deletes those chains.
func removeChains(tool string, report func(string, ...any)) error {
	if _, err := exec.LookPath(tool); err != nil {
		return nil
	}
	removed := 0
	for _, table := range []string{"filter", "nat", "mangle", "raw"} {
		out, err := exec.Command(tool+"-save", "-t", table).Output()
		if err != nil {
			continue // the table does not exist here
		}
		var chains []string
		var jumps [][]string
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, ":") {
				name := strings.Fields(line[1:])[0]
				if ownChain(name) {
					chains = append(chains, name)
				}
				continue
			}
			f := strings.Fields(line)
			if len(f) >= 2 && f[0] == "-A" && !ownChain(f[1]) {
				for i, w := range f {
					if (w == "-j" || w == "-g") && i+1 < len(f) && ownChain(f[i+1]) {
						jumps = append(jumps, f[1:])
					}
				}
			}
		}
		for _, rule := range jumps {
			args := append([]string{"-w", "-t", table, "-D"}, unquoteRule(rule)...)
			if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
				return fmt.Errorf("%s %v: %v: %s", tool, args, err, out)
			}
			removed++
		}
		for _, c := range chains {
			_ = exec.Command(tool, "-w", "-t", table, "-F", c).Run()
		}
		for _, c := range chains {
			if out, err := exec.Command(tool, "-w", "-t", table, "-X", c).CombinedOutput(); err != nil {
				return fmt.Errorf("%s -t %s -X %s: %v: %s", tool, table, c, err, out)
			}
			removed++
		}
	}
	if removed > 0 {
		report("%s: removed %d rules and chains", tool, removed)
	}
	return nil
}

// unquoteRule turns iptables-save's words back into arguments: a quoted
// comment ("-m comment --comment \"a b\"") is one argument.
func unquoteRule(words []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if strings.HasPrefix(w, `"`) {
			j := i
			for !strings.HasSuffix(words[j], `"`) || (j == i && len(w) == 1) {
				if j+1 >= len(words) {
					break
				}
				j++
			}
			out = append(out, strings.Trim(strings.Join(words[i:j+1], " "), `"`))
			i = j
			continue
		}
		out = append(out, w)
	}
	return out
}
