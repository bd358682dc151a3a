package envtest_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// kstatusNow is what a GitOps tool makes of obj now: the live object,
// read from the API server as unstructured (as Flux reads it, with no
// kubenats types), through kstatus. It returns the object's Ready reason
// too, "" while it has none.
func kstatusNow(t *testing.T, obj client.Object) (*kstatus.Result, string, error) {
	t.Helper()
	gvk, err := apiutil.GVKForObject(obj, k8s.Scheme())
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(obj), u); err != nil {
		return nil, "", err
	}
	res, err := kstatus.Compute(u)
	if err != nil {
		return nil, "", err
	}
	var reason string
	if conds, ok, _ := unstructured.NestedSlice(u.Object, "status", "conditions"); ok {
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Ready" {
				reason, _ = m["reason"].(string)
			}
		}
	}
	// kubectl wait --for=condition=Ready ends exactly when kstatus reads
	// Current: a Ready it may not count would let a pipeline go on
	// before the change is done, or hang on a done one. (Careless
	// variant, run: conditions stamped with the generation before, read
	// Current by kstatus and never met by kubectl wait.)
	if waited := kubectlWaitReadyMet(u); waited != (res.Status == kstatus.CurrentStatus) {
		return nil, "", fmt.Errorf("%s: kubectl wait --for=condition=Ready would end: %t, with kstatus %s (%s)", obj.GetName(), waited, res.Status, res.Message)
	}
	return res, reason, nil
}

// kubectlWaitReadyMet is the rule of kubectl wait --for=condition=Ready
// (k8s.io/kubectl v0.37.2, pkg/cmd/wait/condition.go), as written there:
// the condition named Ready, when the generation it was written for
// (its own observedGeneration, else the status') is not older than the
// object's, with status True. kubectl itself is not built here (it is no
// part of the control plane the tests build), so its rule is.
func kubectlWaitReadyMet(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if name, _ := m["type"].(string); !strings.EqualFold(name, "Ready") {
			continue
		}
		observed, found, _ := unstructured.NestedInt64(m, "observedGeneration")
		if !found {
			observed, found, _ = unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		}
		if found && observed < u.GetGeneration() {
			return false
		}
		status, _ := m["status"].(string)
		return strings.EqualFold(status, "True")
	}
	return false
}

// kstatusIs waits until kstatus reads obj as want with its Ready reason
// reason, and reads obj into it then.
func kstatusIs(t *testing.T, obj client.Object, want kstatus.Status, reason string) {
	t.Helper()
	eventually(t, wait, func() error {
		res, got, err := kstatusNow(t, obj)
		if err != nil {
			return err
		}
		if res.Status != want || got != reason {
			return fmt.Errorf("%s: kstatus %s (%s), Ready reason %q; want %s, %q", obj.GetName(), res.Status, res.Message, got, want, reason)
		}
		return k8s.Get(ctx(t), client.ObjectKeyFromObject(obj), obj)
	})
}

// stalledSays checks that a Failed object's Stalled condition carries
// its Ready condition's message: a tool that shows kstatus' answer alone
// still says why.
func stalledSays(t *testing.T, conds []metav1.Condition) {
	t.Helper()
	ready, stalled := meta.FindStatusCondition(conds, "Ready"), meta.FindStatusCondition(conds, "Stalled")
	if ready == nil || stalled == nil || stalled.Message != ready.Message || stalled.Message == "" {
		t.Fatalf("Stalled %+v, Ready %+v: want Stalled with Ready's message", stalled, ready)
	}
}

// kstatusHolds is nil while kstatus reads obj as want.
func kstatusHolds(t *testing.T, obj client.Object, want kstatus.Status) error {
	res, _, err := kstatusNow(t, obj)
	if err != nil {
		return err
	}
	if res.Status != want {
		return fmt.Errorf("%s: kstatus %s (%s), want %s", obj.GetName(), res.Status, res.Message, want)
	}
	return nil
}
