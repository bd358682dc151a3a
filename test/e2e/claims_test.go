package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// claimDir is where the loopback kubelet keeps a claim's data, the volume
// behind it (test/loopback, kubelet.claimDir).
func claimDir(claim *corev1.PersistentVolumeClaim) string {
	return filepath.Join(cluster.Dir, "claims", claim.Namespace+"_"+claim.Name+"_"+string(claim.UID))
}

// claimName is the claim of a server pod: the StatefulSet's volume claim
// template "data" and the pod's name.
func claimName(pod string) string { return "data-" + pod }

// holdsData says why the directory is not a server's store, or nil: it
// must exist and have something in it (the server writes its JetStream
// state there at start).
func holdsData(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return fmt.Errorf("claim directory %s is empty", dir)
	}
	return nil
}

// serverClaims reads the claims of f's servers, each of which must exist.
func serverClaims(ctx context.Context, f *formed) ([]*corev1.PersistentVolumeClaim, error) {
	var out []*corev1.PersistentVolumeClaim
	for _, pod := range f.Pods {
		claim := &corev1.PersistentVolumeClaim{}
		if err := cluster.Client.Get(ctx, types.NamespacedName{Namespace: f.NS, Name: claimName(pod)}, claim); err != nil {
			return nil, err
		}
		out = append(out, claim)
	}
	return out, nil
}
