package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestDeletionCollectsChildren: deleting a NatsCluster leaves nothing of it
// running: the real garbage collector removes every child, the servers'
// pods go and their processes exit. The claims follow
// spec.jetstream.fileStore.pvcRetentionPolicy: kept, data and all, under
// Retain; removed with their data under Delete. Two clusters side by side
// in one namespace, one per policy, also show that deleting one leaves the
// other's objects alone until its own turn.
func TestDeletionCollectsChildren(t *testing.T) {
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	keep := formNamed(t, ns, "keep", retention(v1alpha1.PVCRetain))
	drop := formNamed(t, ns, "drop", retention(v1alpha1.PVCDelete))

	ctx := testCtx(t)
	for _, f := range []*formed{keep, drop} {
		if err := checkControlled(ctx, f.Cluster); err != nil {
			t.Fatal(err)
		}
	}
	keptClaims := claimsWithData(t, keep)
	droppedClaims := claimsWithData(t, drop)

	for _, f := range []*formed{keep, drop} {
		// The addresses the servers listen on now: a pod's address is given
		// back when its process is gone, so it is read before.
		ips := map[string]string{}
		for _, pod := range f.Pods {
			if ips[pod] = f.IP(pod); ips[pod] == "" {
				t.Fatalf("pod %s holds no address", pod)
			}
		}
		began := time.Now()
		if err := cluster.Client.Delete(ctx, f.Cluster); err != nil {
			t.Fatal(err)
		}
		eventually(t, formTimeout, func() error { return allGone(ctx, f, ips) })
		t.Logf("NatsCluster %s (pvcRetentionPolicy %s): every child, pod and server process gone %.2fs after the delete call",
			f.Cluster.Name, f.Cluster.Spec.JetStream.FileStore.PVCRetentionPolicy, time.Since(began).Seconds())
		if f == keep {
			// Deleting keep must not have touched drop.
			if err := checkControlled(ctx, drop.Cluster); err != nil {
				t.Fatalf("after deleting %s: %v", keep.Cluster.Name, err)
			}
		}
	}

	eventually(t, wait, func() error { return claimsDeleted(ctx, droppedClaims) })
	t.Logf("claims of %s and their directories removed", drop.Cluster.Name)
	if err := claimsKept(ctx, keptClaims); err != nil {
		t.Fatal(err)
	}
	t.Logf("claims of %s kept, unowned, their data in place", keep.Cluster.Name)
}

func retention(p v1alpha1.PVCRetentionPolicy) func(*v1alpha1.NatsClusterSpec) {
	return func(s *v1alpha1.NatsClusterSpec) { s.JetStream.FileStore.PVCRetentionPolicy = p }
}

// claimsWithData reads the claims of f's servers and checks that each has
// its directory with the server's store in it.
func claimsWithData(t *testing.T, f *formed) []*corev1.PersistentVolumeClaim {
	t.Helper()
	claims, err := serverClaims(testCtx(t), f)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range claims {
		if err := holdsData(claimDir(c)); err != nil {
			t.Fatal(err)
		}
	}
	return claims
}

// allGone says what of f is still there: the NatsCluster, a child, a pod,
// or a server still answering at the address its pod had (ips).
func allGone(ctx context.Context, f *formed, ips map[string]string) error {
	if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(f.Cluster), &v1alpha1.NatsCluster{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("NatsCluster %s still there (%v)", f.Cluster.Name, err)
	}
	for _, o := range childrenOf(f.Cluster) {
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(o), o); !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s still there (%v)", describe(o), err)
		}
	}
	left, err := labelledLeft(ctx, f.Cluster)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("still labelled as %s's: %v", f.Cluster.Name, left)
	}
	for _, pod := range f.Pods {
		if err := processGone(ips[pod]); err != nil {
			return fmt.Errorf("pod %s: %w", pod, err)
		}
	}
	return nil
}

// processGone: nothing listens on the server's ports at its pod address
// any more; the address was the pod's alone (and is not handed out again at
// once), so the process has exited.
func processGone(ip string) error {
	for _, port := range []string{"4222", "6222", "8222"} {
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(ip, port), time.Second)
		if err == nil {
			_ = conn.Close()
			return fmt.Errorf("something still listens on %s:%s", ip, port)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("dialing %s:%s: %v, want connection refused", ip, port, err)
		}
	}
	return nil
}

// claimsDeleted: the claims and their directories are gone.
func claimsDeleted(ctx context.Context, claims []*corev1.PersistentVolumeClaim) error {
	for _, c := range claims {
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(c), &corev1.PersistentVolumeClaim{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("claim %s still there (%v)", c.Name, err)
		}
		if _, err := os.Stat(claimDir(c)); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("claim %s is gone but its directory is not (%v)", c.Name, err)
		}
	}
	return nil
}

// claimsKept: the same claims (UIDs), not being deleted and owned by
// nothing, so that no garbage collection can take them later, their data
// in place.
func claimsKept(ctx context.Context, claims []*corev1.PersistentVolumeClaim) error {
	for _, c := range claims {
		live := &corev1.PersistentVolumeClaim{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(c), live); err != nil {
			return fmt.Errorf("claim %s: %w", c.Name, err)
		}
		switch {
		case live.UID != c.UID:
			return fmt.Errorf("claim %s was replaced", c.Name)
		case live.DeletionTimestamp != nil:
			return fmt.Errorf("claim %s is being deleted", c.Name)
		case len(live.OwnerReferences) > 0:
			return fmt.Errorf("claim %s is owned by %+v: garbage collection would take it", c.Name, live.OwnerReferences)
		}
		if err := holdsData(claimDir(live)); err != nil {
			return err
		}
	}
	return nil
}
