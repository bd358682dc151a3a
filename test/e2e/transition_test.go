package e2e_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// TestRouteTLSTransitionUnderLoad turns route TLS on for a running cluster
// that had it off (as a cluster of the previous release has), then off
// again, while a client keeps publishing to an R3 stream with message IDs.
// Servers with and without route TLS cannot route to each other, so the
// operator restarts them all at once once the cluster is settled; the
// cluster regains its quorum by itself, every acknowledged message is read
// back, and the longest stall of the publisher is reported.
func TestRouteTLSTransitionUnderLoad(t *testing.T) {
	f := formCluster(t, routeTLS(false))
	pub, js, stream := startPublishing(t, f)
	defer pub.Halt()
	ackedAtLeast := func(n int) {
		eventually(t, upgradeTimeout, func() error {
			if got := pub.Count(); got < n {
				return fmt.Errorf("%d messages acknowledged, waiting for %d", got, n)
			}
			return nil
		})
	}
	ackedAtLeast(100)

	// Replacements are counted from the pods themselves (distinct UIDs per
	// name), not from RollingUpdate events, which the recorder folds into
	// one when a careless operator restarts a server twice in a flip.
	pods := recordPods(t, f.NS)
	pods.seen(t, f.Pods)
	checkRoutePorts(t, f, false)
	for flip, on := range []bool{true, false} {
		began := time.Now()
		setRouteTLS(t, f, on)
		waitRouteTLS(t, f, on)
		// The port itself, not the operator's annotation: an operator that
		// marks the pods and restarts them with the old config passes
		// waitRouteTLS and fails here.
		checkRoutePorts(t, f, on)
		for _, pod := range f.Pods {
			if n := len(pods.uids(pod)); n != flip+2 {
				t.Errorf("after flip %d, %s has had %d pods, want one replacement per flip (%d)", flip+1, pod, n, flip+2)
			}
		}
		ackedAtLeast(pub.Count() + 100) // publishing goes on after the transition
		checkRoutes(t, f)
		t.Logf("route TLS %v: %s to Ready", on, time.Since(began).Round(time.Millisecond))
	}
	pub.Halt()
	acked, stall := pub.Result()
	checkEveryIDStored(t, js, acked, storedCount(t, js, stream, acked))
	t.Logf("route TLS on and off under load: %d messages acknowledged, none lost; longest publish stall %s", acked, stall.Round(time.Millisecond))
}

func setRouteTLS(t *testing.T, f *formed, on bool) {
	t.Helper()
	c := f.Cluster
	eventually(t, wait, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		c.Spec.TLS.Routes.Enabled = &on
		return cluster.Client.Update(testCtx(t), c)
	})
}

// waitRouteTLS waits for Ready with every server in the wanted mode.
func waitRouteTLS(t *testing.T, f *formed, on bool) {
	t.Helper()
	waitPodsMarked(t, f, render.AnnotationRouteTLS, fmt.Sprint(on))
}

// waitPodsMarked waits for Ready with every server's pod carrying the
// annotation with the value want.
func waitPodsMarked(t *testing.T, f *formed, annotation, want string) {
	t.Helper()
	eventually(t, upgradeTimeout, func() error {
		c := f.Cluster
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		if c.Status.ObservedGeneration != c.Generation || !meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionReady) {
			return fmt.Errorf("not Ready yet: %+v", meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady))
		}
		for _, name := range f.Pods {
			var p corev1.Pod
			if err := cluster.Client.Get(testCtx(t), client.ObjectKey{Namespace: f.NS, Name: name}, &p); err != nil {
				return err
			}
			if got := p.Annotations[annotation]; got != want {
				return fmt.Errorf("%s has %s %q, want %s", name, annotation, got, want)
			}
		}
		return nil
	})
}
