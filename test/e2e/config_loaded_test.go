package e2e_test

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// waitConfigLoaded waits for c's ConfigLoaded condition to go False with
// the change (the loopback kubelet refreshes the pods' files seconds late,
// so a correct operator cannot confirm sooner) and then True again, and
// checks, the moment it reads True, that every server already runs what the
// change made (confirmed): a status that flips before the servers have
// loaded the change fails here, since no server goes back.
func waitConfigLoaded(t *testing.T, f *formed, changed time.Time, timeout time.Duration, confirmed func() error) *metav1.Condition {
	t.Helper()
	c := f.Cluster
	condition := func(want metav1.ConditionStatus) func() error { return configLoadedIs(t, c, want) }
	eventually(t, timeout, condition(metav1.ConditionFalse))
	t.Logf("ConfigLoaded False %.2fs after the change: %s", time.Since(changed).Seconds(),
		meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionConfigLoaded).Message)
	eventually(t, timeout, condition(metav1.ConditionTrue))
	if err := confirmed(); err != nil {
		t.Fatalf("ConfigLoaded turned True before every server loaded the change: %v", err)
	}
	return meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionConfigLoaded)
}

// readyOnlyOnceLoaded checks, from the Ready conditions h saw since
// changed, that Ready said the servers were behind and came back True only
// after the last server had loaded the change (by its own
// config_load_time): a client that waits for Ready before it uses the new
// credentials is never refused.
func readyOnlyOnceLoaded(t *testing.T, f *formed, h *statusHistory, changed time.Time) {
	t.Helper()
	waitClusterReady(t, f.Cluster, wait)
	var lastLoad time.Time
	var lastPod string
	for pod, v := range snapshot(t, f).varz {
		if v.ConfigLoadTime.After(lastLoad) {
			lastLoad, lastPod = v.ConfigLoadTime, pod
		}
	}
	if h.said(changed, time.Now(), "not loaded the configuration and credentials written last") == "" {
		t.Errorf("Ready never said a server was behind; it showed:\n%s", h.between(changed, time.Now()))
		return
	}
	var back time.Time
	eventually(t, wait, func() error {
		var ok bool
		if back, ok = h.trueBetween(h.firstFalse(changed), time.Now().Add(time.Hour)); !ok {
			return fmt.Errorf("the watch has not delivered Ready True yet")
		}
		return nil
	})
	if back.Before(lastLoad) {
		t.Errorf("Ready True %s after the change, before %s loaded it (%s after):\n%s", back.Sub(changed).Round(time.Millisecond),
			lastPod, lastLoad.Sub(changed).Round(time.Millisecond), h.between(changed, time.Now()))
	}
	t.Logf("Ready True again %.2fs after the change, %s after the last server (%s) loaded it",
		back.Sub(changed).Seconds(), back.Sub(lastLoad).Round(time.Millisecond), lastPod)
}

// configLoadedIs checks that c's ConfigLoaded condition, for its current
// generation, has status want.
func configLoadedIs(t *testing.T, c *v1alpha1.NatsCluster, want metav1.ConditionStatus) func() error {
	return func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		got := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionConfigLoaded)
		if got == nil || got.ObservedGeneration != c.Generation || got.Status != want {
			return fmt.Errorf("ConfigLoaded %+v for generation %d, want %s", got, c.Generation, want)
		}
		return nil
	}
}

// waitConfigLoadedNow waits for every server of f to run what the operator
// wrote last: from then on it sends them no reload.
func waitConfigLoadedNow(t *testing.T, f *formed) {
	t.Helper()
	eventually(t, wait, configLoadedIs(t, f.Cluster, metav1.ConditionTrue))
}
