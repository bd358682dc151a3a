package loopback

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A claim is a filesystem of the size it requests, as a provisioned volume
// is: a sparse image file under claims/, formatted ext4 as the kubelet
// formats a new volume (mkfs.ext4 -F -m0: no blocks reserved for root)
// under claim-images/ and loop-mounted at the claim's directory. A store that outgrows its claim
// meets "no space left on device" here as it would in a real cluster, with
// the same share of the bytes taken by ext4 itself; a plain directory would
// let it grow to the size of the host's disk. The image lives as long as
// the claim; it is mounted when a pod first needs it and stays mounted
// across pod re-creations (a StatefulSet's replacement reuses the claim)
// until the claim is deleted or the cluster stops.

// claimMounts are the claims the kubelet has mounted, by claim UID.
type claimMounts struct {
	mu      sync.Mutex
	mounted map[types.UID]string // mount point
	warned  bool                 // that claims have no size, not being root
}

// claimVolume is the directory of claim's mounted filesystem, made and
// mounted on first use.
func (k *kubelet) claimVolume(claim *corev1.PersistentVolumeClaim) (string, error) {
	dir := k.claimDir(claim)
	k.claimMounts.mu.Lock()
	defer k.claimMounts.mu.Unlock()
	if _, ok := k.claimMounts.mounted[claim.UID]; ok {
		return dir, nil
	}
	if os.Geteuid() != 0 {
		// Mounting needs root (tests and CI run as root; a demo may not):
		// then a claim is a plain directory, with no size.
		if !k.claimMounts.warned {
			k.logf("not root: claims are plain directories, their sizes not enforced")
			k.claimMounts.warned = true
		}
		return dir, os.MkdirAll(dir, 0o755)
	}
	size, ok := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok || size.Value() <= 0 {
		return "", fmt.Errorf("persistentvolumeclaim %q requests no storage", claim.Name)
	}
	image := k.claimImage(claim)
	if err := makeClaimImage(image, size.Value()); err != nil {
		return "", fmt.Errorf("persistentvolumeclaim %q: %w", claim.Name, err)
	}
	if err := mountClaimImage(image, dir); err != nil {
		return "", fmt.Errorf("persistentvolumeclaim %q: %w", claim.Name, err)
	}
	if k.claimMounts.mounted == nil {
		k.claimMounts.mounted = map[types.UID]string{}
	}
	k.claimMounts.mounted[claim.UID] = dir
	k.logf("claim %s/%s: %s ext4 mounted at %s", claim.Namespace, claim.Name, size.String(), dir)
	return dir, nil
}

// claimImage is the file that holds the claim's filesystem.
func (k *kubelet) claimImage(claim *corev1.PersistentVolumeClaim) string {
	return filepath.Join(k.dir, "claim-images", filepath.Base(k.claimDir(claim))+".ext4")
}

// removeClaim unmounts the claim's filesystem and removes it with its image.
func (k *kubelet) removeClaim(claim *corev1.PersistentVolumeClaim) {
	dir := k.claimDir(claim)
	k.claimMounts.mu.Lock()
	defer k.claimMounts.mu.Unlock()
	if _, ok := k.claimMounts.mounted[claim.UID]; ok {
		if err := unmount(dir); err != nil {
			k.logf("claim %s/%s: %v", claim.Namespace, claim.Name, err)
		}
		delete(k.claimMounts.mounted, claim.UID)
	}
	_ = os.RemoveAll(dir)
	_ = os.Remove(k.claimImage(claim))
}

// unmountClaims unmounts every claim, leaving the images: the kubelet
// stops, its processes already ended.
func (k *kubelet) unmountClaims() {
	k.claimMounts.mu.Lock()
	defer k.claimMounts.mu.Unlock()
	for uid, dir := range k.claimMounts.mounted {
		if err := unmount(dir); err != nil {
			k.logf("%v", err)
		}
		delete(k.claimMounts.mounted, uid)
	}
}

// makeClaimImage makes a sparse image of size bytes with an ext4
// filesystem, unless it exists (the claim was mounted before: its data
// stays). Lazy table and journal initialisation, and no discard, keep the
// image sparse: only what is written takes the host's disk.
func makeClaimImage(image string, size int64) error {
	if _, err := os.Stat(image); err == nil {
		return nil
	}
	tmp := image + ".new"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	out, err := exec.Command("mkfs.ext4", "-q", "-F", "-m0",
		"-E", "lazy_itable_init=1,lazy_journal_init=1,nodiscard", tmp).CombinedOutput()
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("mkfs.ext4: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return os.Rename(tmp, image)
}

// mountClaimImage loop-mounts image at dir. mount(8) sets up the loop
// device with autoclear, so the unmount frees it. noinit_itable: the
// kernel does not zero the inode tables in the background either.
func mountClaimImage(image, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	out, err := exec.Command("mount", "-t", "ext4", "-o", "loop,noinit_itable", image, dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("mount: %v: %s", err, strings.TrimSpace(string(out)))
	}
	// A fresh directory, as the server expects to find it: lost+found is
	// ext4's, not the server's (e2fsck makes it again if ever needed).
	if err := os.Remove(filepath.Join(dir, "lost+found")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// unmount detaches dir's filesystem; lazily if something still holds it
// (a process the kubelet already killed but the kernel has not reaped).
func unmount(dir string) error {
	err := syscall.Unmount(dir, 0)
	if errors.Is(err, syscall.EBUSY) {
		err = syscall.Unmount(dir, syscall.MNT_DETACH)
	}
	if err != nil && !errors.Is(err, syscall.EINVAL) { // EINVAL: not mounted
		return fmt.Errorf("unmounting %s: %w", dir, err)
	}
	return nil
}

// mountsUnder lists the mount points at or below dir, from the kernel's
// table: what a stopped cluster must not leave behind.
func mountsUnder(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 5 {
			continue
		}
		// Field 5 is the mount point, with spaces and the like octal-escaped.
		if p := fields[4]; p == dir || strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	return out, s.Err()
}

// ownerFile, in a cluster's directory, holds the pid of the process that
// runs the cluster: a later cluster unmounts the claims of one whose
// process died without stopping it (a test binary killed at its timeout).
const ownerFile = "owner.pid"

// markOwner records this process as dir's cluster's.
func markOwner(dir string) error {
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644)
}

// unmountOrphans unmounts the claims of the clusters under parent whose
// process is gone, leaving their directories (and images) for a look. A
// directory with no owner file, or whose owner runs, is not touched.
func unmountOrphans(parent string, logf func(string, ...any)) {
	dirs, _ := filepath.Glob(filepath.Join(parent, "kubenats-loopback-*"))
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 0 || !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			continue
		}
		mounts, _ := mountsUnder(filepath.Join(dir, "claims"))
		for _, m := range mounts {
			if err := unmount(m); err != nil {
				logf("orphaned claim of a dead cluster (pid %d): %v", pid, err)
			} else {
				logf("unmounted %s, a claim of a cluster whose process (pid %d) is gone", m, pid)
			}
		}
	}
}
