package envtest_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

func TestForeignObjectWithTheSameNameIsRefused(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	foreign := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats-config"},
		Data:       map[string]string{"nats.conf": "someone else's"},
	}
	create(t, foreign)

	c := natsCluster(ns, "nats")
	create(t, c)
	c = readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonNameConflict)
	if c.Status.Phase != v1alpha1.PhaseFailed {
		t.Fatalf("phase = %s, want Failed", c.Status.Phase)
	}
	eventually(t, wait, func() error { return eventWithReason(t, ns, v1alpha1.ReasonNameConflict) })

	if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(foreign), foreign); err != nil {
		t.Fatal(err)
	}
	if foreign.Data["nats.conf"] != "someone else's" || len(foreign.OwnerReferences) != 0 {
		t.Fatalf("the foreign ConfigMap was touched: data %q, owners %v", foreign.Data, foreign.OwnerReferences)
	}
}

// eventWithReason finds an event in ns with the given reason.
func eventWithReason(t *testing.T, ns, reason string) error {
	var list eventsv1.EventList
	if err := k8s.List(ctx(t), &list, client.InNamespace(ns)); err != nil {
		return err
	}
	var seen []string
	for _, e := range list.Items {
		if e.Reason == reason {
			return nil
		}
		seen = append(seen, e.Reason)
	}
	return fmt.Errorf("no event with reason %s, have %s", reason, strings.Join(seen, ", "))
}
