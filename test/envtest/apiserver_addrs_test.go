package envtest_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/internal/manager"
)

// TestOperatorReadsTheAPIServersAddresses: the shipped RBAC lets the
// operator read the kubernetes Service and its EndpointSlice in default,
// which the target policy refuses for connection.servers (issue 17), and
// nothing else there: it may not list the namespace's EndpointSlices or
// read another Service of it.
func TestOperatorReadsTheAPIServersAddresses(t *testing.T) {
	t.Parallel()
	op, err := client.New(operatorCfg, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: "default", Name: "kubernetes"}
	var svc corev1.Service
	if err := op.Get(ctx(t), key, &svc); err != nil {
		t.Fatalf("the kubernetes Service: %v", err)
	}
	if len(svc.Spec.ClusterIPs) == 0 {
		t.Errorf("the kubernetes Service has no ClusterIP: %+v", svc.Spec)
	}
	var es discoveryv1.EndpointSlice
	if err := op.Get(ctx(t), key, &es); err != nil {
		t.Fatalf("the kubernetes EndpointSlice: %v", err)
	}
	if len(es.Endpoints) == 0 || len(es.Endpoints[0].Addresses) == 0 {
		t.Errorf("the kubernetes EndpointSlice has no address: %+v", es.Endpoints)
	}
	for what, call := range map[string]func() error{
		"list EndpointSlices in default": func() error {
			return op.List(ctx(t), &discoveryv1.EndpointSliceList{}, client.InNamespace("default"))
		},
		"delete the kubernetes EndpointSlice": func() error { return op.Delete(ctx(t), &es) },
		"update the kubernetes Service":       func() error { return op.Update(ctx(t), &svc) },
	} {
		if err := call(); !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want forbidden", what, err)
		}
	}
}
