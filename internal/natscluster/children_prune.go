package natscluster

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// optionalKinds are the kinds of children that exist only while the spec
// asks for them. Garbage collection removes children with their cluster;
// a child the spec stops asking for is removed here. A kind listed here
// needs list, watch and delete in the RBAC markers.
var optionalKinds = []func() client.ObjectList{
	func() client.ObjectList { return &networkingv1.NetworkPolicyList{} },
	func() client.ObjectList { return &networkingv1.IngressList{} },
}

// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies;ingresses,verbs=get;list;watch;create;patch;delete

// pruneOptional deletes the children of an optional kind that c controls
// and that render no longer returns (objs). It reads the label-filtered
// cache and never touches an object c does not control.
func (r *Reconciler) pruneOptional(ctx context.Context, c *v1alpha1.NatsCluster, objs []client.Object) error {
	wanted := map[string]bool{}
	for _, o := range objs {
		wanted[childKey(o)] = true
	}
	kinds := optionalKinds
	if r.prometheusOperator() {
		kinds = append(slices.Clone(kinds), monitoringKinds...)
	}
	for _, newList := range kinds {
		list := newList()
		if err := r.List(ctx, list, client.InNamespace(c.Namespace), client.MatchingLabels{
			render.LabelInstance: c.Name, render.LabelManagedBy: render.ManagedBy,
		}); err != nil {
			return err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		for _, item := range items {
			obj, ok := item.(client.Object)
			if !ok || !metav1.IsControlledBy(obj, c) || wanted[childKey(obj)] || !obj.GetDeletionTimestamp().IsZero() {
				continue
			}
			uid := obj.GetUID()
			err := r.Delete(ctx, obj, client.Preconditions{UID: &uid})
			if apierrors.IsNotFound(err) {
				continue // gone already; the cache has yet to see it
			}
			if err != nil {
				return fmt.Errorf("removing %s %s, which the spec no longer asks for: %w", kindOf(obj), obj.GetName(), err)
			}
			r.Recorder.Eventf(c, obj, corev1.EventTypeNormal, "Removed", "Prune",
				"removed %s %s: the spec no longer asks for it", kindOf(obj), obj.GetName())
		}
	}
	return nil
}

// childKey tells children apart by Go type and name: list items carry no
// apiVersion and kind.
func childKey(o client.Object) string { return fmt.Sprintf("%T/%s", o, o.GetName()) }

// kindOf is the kind of a typed object for an event, from its Go type.
func kindOf(o client.Object) string { return reflect.Indirect(reflect.ValueOf(o)).Type().Name() }
