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

// waitConfigLoaded waits for c's ConfigLoaded condition to turn True for
// its current generation, and checks, the moment it reads True, that every
// server already runs what the change made (confirmed): a status that
// flips before the servers have loaded the change fails here, since no
// server goes back. It returns the condition, which must have changed
// after changed: it went False with the change, and True again since.
func waitConfigLoaded(t *testing.T, f *formed, changed time.Time, timeout time.Duration, confirmed func(varzRuntime) error) *metav1.Condition {
	t.Helper()
	c := f.cluster
	var loaded *metav1.Condition
	eventually(t, timeout, func() error {
		if err := cluster.Client.Get(testCtx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		loaded = meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionConfigLoaded)
		if loaded == nil || loaded.ObservedGeneration != c.Generation || loaded.Status != metav1.ConditionTrue {
			return fmt.Errorf("ConfigLoaded %+v for generation %d", loaded, c.Generation)
		}
		return nil
	})
	if err := onEveryServer(f, confirmed); err != nil {
		t.Fatalf("ConfigLoaded turned True before every server loaded the change: %v", err)
	}
	// Transition times have second precision.
	if loaded.LastTransitionTime.Time.Before(changed.Truncate(time.Second)) {
		t.Errorf("ConfigLoaded last changed at %s, before the change at %s: it never waited for the servers", loaded.LastTransitionTime, changed)
	}
	return loaded
}
