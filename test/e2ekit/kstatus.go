package e2ekit

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// KstatusCurrent waits until GitOps tools read obj as current: the live
// object, read as unstructured (as Flux reads it, without kubenats'
// types), through kstatus. Every formation checks it once its cluster is
// Ready, so that each suite's real servers prove it (careless variant,
// run: Reconciling written whatever Ready says).
func KstatusCurrent(t *testing.T, obj client.Object) {
	t.Helper()
	gvk, err := apiutil.GVKForObject(obj, Cluster.Client.Scheme())
	if err != nil {
		t.Fatal(err)
	}
	Eventually(t, Wait, func() error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := Cluster.Client.Get(Ctx(t), client.ObjectKeyFromObject(obj), u); err != nil {
			return err
		}
		res, err := kstatus.Compute(u)
		if err != nil {
			return err
		}
		if res.Status != kstatus.CurrentStatus {
			return fmt.Errorf("%s %s: kstatus %s (%s), want Current", gvk.Kind, obj.GetName(), res.Status, res.Message)
		}
		return nil
	})
}
