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
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			file = filepath.Join("/sys/fs/cgroup", parts[2], "memory.max")
			if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err != nil {
				continue // the unified hierarchy of a v1 machine
			}
		case strings.Contains(","+parts[1]+",", ",memory,"):
			file = filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes")
		default:
			continue
		}
		v, err := os.ReadFile(file)
		if err != nil {
			return 0, err
		}
		s := strings.TrimSpace(string(v))
		if s == "max" {
			return -1, nil
		}
		return strconv.ParseInt(s, 10, 64)
	}
	return 0, fmt.Errorf("process %d is in no memory cgroup:\n%s", pid, data)
}
