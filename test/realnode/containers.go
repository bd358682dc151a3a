package realnode

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ContainerPID is the first process of the running container name of pod
// p, found in the cgroup containerd made for it (named after the
// container's id, below the node's cgroup root): the process a test reads
// from /proc, as the kernel sees it.
func ContainerPID(p *corev1.Pod, name string) (int, error) {
	var id string
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == name && s.State.Running != nil {
			_, id, _ = strings.Cut(s.ContainerID, "://")
		}
	}
	if id == "" {
		return 0, fmt.Errorf("pod %s/%s has no running container %s", p.Namespace, p.Name, name)
	}
	for _, root := range cgroupDirs() {
		var found string
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && d.Name() == id {
				found = path
				return filepath.SkipAll
			}
			return nil
		})
		if found == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(found, "cgroup.procs"))
		if err != nil {
			return 0, err
		}
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				// The container's first process is the one whose parent
				// is outside it (the shim).
				if !inCgroup(parentOf(pid), data) {
					return pid, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("no cgroup of container %s (%s/%s %s) below %v", id, p.Namespace, p.Name, name, cgroupDirs())
}

func parentOf(pid int) int {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

func inCgroup(pid int, procs []byte) bool {
	for _, f := range strings.Fields(string(procs)) {
		if f == strconv.Itoa(pid) {
			return true
		}
	}
	return false
}

// MemoryLimit is the memory limit, in bytes, of the cgroup process pid is
// in: memory.limit_in_bytes of cgroup v1's memory controller, or
// memory.max of v2 ("max" is -1).
func MemoryLimit(pid int) (int64, error) {
	s, err := memoryFile(pid, "memory.limit_in_bytes", "memory.max")
	if err != nil || s == "max" {
		return -1, err
	}
	return strconv.ParseInt(s, 10, 64)
}

// MemoryPeak is the most memory the cgroup of process pid has held, in
// bytes: memory.max_usage_in_bytes (v1) or memory.peak (v2). It counts
// the page cache, which the kernel reclaims at the limit.
func MemoryPeak(pid int) (int64, error) {
	s, err := memoryFile(pid, "memory.max_usage_in_bytes", "memory.peak")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(s, 10, 64)
}

// OOMKills is how many processes the kernel killed in the cgroup of
// process pid for its limit: oom_kill in memory.oom_control (v1) or
// memory.events (v2).
func OOMKills(pid int) (int64, error) {
	s, err := memoryFile(pid, "memory.oom_control", "memory.events")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("no oom_kill count in the memory cgroup of %d", pid)
}

// memoryFile reads a file of the memory cgroup process pid is in: v1's
// name under the memory controller, or v2's in the unified hierarchy.
func memoryFile(pid int, v1, v2 string) (string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			file = filepath.Join("/sys/fs/cgroup", parts[2], v2)
			if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err != nil {
				continue // the unified hierarchy of a v1 machine
			}
		case strings.Contains(","+parts[1]+",", ",memory,"):
			file = filepath.Join("/sys/fs/cgroup/memory", parts[2], v1)
		default:
			continue
		}
		v, err := os.ReadFile(file)
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(string(v)), nil
	}
	return "", fmt.Errorf("process %d is in no memory cgroup:\n%s", pid, data)
}
