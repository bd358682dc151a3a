package loopback

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClaimHasItsSize: a claim is a filesystem of the size it requests.
// Writing past it fails with ENOSPC, while the server runs on it; the
// filesystem and what is on it outlive the pod, and go with the claim.
func TestClaimHasItsSize(t *testing.T) {
	t.Parallel()
	c := sharedCluster(t)
	ctx := context.Background()
	ns, _ := probeNamespace(t, c, "claim-size")
	const size = 64 << 20
	sts := probeStatefulSet(ns.Name)
	sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = *resource.NewQuantity(size, resource.BinarySI)
	must(t, c.Client.Create(ctx, sts))
	pod := readyPod(t, c, ns.Name, "probe-0", 0)

	dirs, _ := filepath.Glob(filepath.Join(c.Dir, "claims", ns.Name+"_data-probe-0_*"))
	if len(dirs) != 1 {
		t.Fatalf("claim directories %v, want one", dirs)
	}
	dir := dirs[0]
	if m, err := mountsUnder(dir); err != nil || !slices.Equal(m, []string{dir}) {
		t.Fatalf("mounts at the claim's directory: %v (%v), want its own filesystem", m, err)
	}
	var fs syscall.Statfs_t
	must(t, syscall.Statfs(dir, &fs))
	if total := int64(fs.Blocks) * fs.Bsize; total > size || total < size*3/4 {
		t.Fatalf("the claim's filesystem holds %d bytes, want a little less than its %d", total, size)
	}

	// Fill it: the write that does not fit fails with ENOSPC, after about
	// the claim's size (less what ext4 keeps).
	written, err := fill(filepath.Join(dir, "fill"))
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("writing %d bytes into a %d byte claim: %v, want ENOSPC", written, size, err)
	}
	if written < size*3/4 || written > size {
		t.Fatalf("%d bytes fitted in a %d byte claim", written, size)
	}
	must(t, os.Remove(filepath.Join(dir, "fill")))

	// A new pod of the StatefulSet finds the same filesystem, data kept.
	marker := filepath.Join(dir, "marker")
	must(t, os.WriteFile(marker, []byte("kept"), 0o644))
	oldUID := pod.UID
	must(t, c.Client.Delete(ctx, pod))
	eventually(t, func() error {
		next := readyPod(t, c, ns.Name, "probe-0", 0)
		if next.UID == oldUID {
			return fmt.Errorf("still the old pod")
		}
		return nil
	})
	if data, err := os.ReadFile(marker); err != nil || string(data) != "kept" {
		t.Fatalf("claim data after the pod's replacement: %q, %v", data, err)
	}
	if m, _ := mountsUnder(dir); !slices.Equal(m, []string{dir}) {
		t.Fatalf("mounts at the claim's directory after the replacement: %v, want its filesystem once", m)
	}

	// The claim goes: its filesystem is unmounted and its image removed.
	deleteStatefulSet(t, c, ns.Name, "probe")
	must(t, c.Client.Delete(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "data-probe-0"}}))
	image := filepath.Join(c.Dir, "claim-images", filepath.Base(dir)+".ext4")
	eventually(t, func() error {
		if m, err := mountsUnder(dir); err != nil || len(m) > 0 {
			return fmt.Errorf("still mounted: %v (%v)", m, err)
		}
		if _, err := os.Stat(image); !os.IsNotExist(err) {
			return fmt.Errorf("image still there (%v)", err)
		}
		return nil
	})
}

// fill writes to path, 1 MiB at a time and synced, until a write fails;
// it returns the bytes that were written and the failure.
func fill(path string) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i) // not zeros: nothing may store them sparsely
	}
	var written int64
	for written < 1<<30 { // a bound should the claim have no size
		n, err := f.Write(chunk)
		written += int64(n)
		if err == nil {
			err = f.Sync()
		}
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// TestOrphanedClaimsAreUnmounted: the claims of a cluster whose process
// died are unmounted by the next cluster; those of a cluster whose process
// runs, and of a directory with no owner, are left alone.
func TestOrphanedClaimsAreUnmounted(t *testing.T) {
	parent := t.TempDir()
	dead := exec.Command("true")
	must(t, dead.Run())
	mounted := map[string]string{}
	for name, owner := range map[string]string{
		"kubenats-loopback-dead":    strconv.Itoa(dead.Process.Pid),
		"kubenats-loopback-alive":   strconv.Itoa(os.Getpid()),
		"kubenats-loopback-unowned": "",
	} {
		dir := filepath.Join(parent, name)
		m := filepath.Join(dir, "claims", "ns_data-0_uid")
		must(t, os.MkdirAll(m, 0o755))
		if owner != "" {
			must(t, os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner), 0o644))
		}
		must(t, syscall.Mount("tmpfs", m, "tmpfs", 0, "size=1m"))
		t.Cleanup(func() { _ = unmount(m) })
		mounted[name] = m
	}
	unmountOrphans(parent, t.Logf)
	for name, m := range mounted {
		left, err := mountsUnder(m)
		if err != nil {
			t.Fatal(err)
		}
		if want := name != "kubenats-loopback-dead"; (len(left) == 1) != want {
			t.Errorf("%s: mounts %v, want mounted %t", name, left, want)
		}
	}
}
