package usersecrets

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Index indexes resources by the user Secrets they name, so that
// a rotated (or newly opted-in) Secret wakes exactly its users.
const Index = "kubenats.io/user-secret"

// Source is a watch of the opted-in Secrets that enqueues the
// objects of list's kind, in the Secret's namespace, that name it.
func Source(secrets cache.Cache, reader client.Reader, newList func() client.ObjectList) source.Source {
	return source.Kind(secrets, &corev1.Secret{}, handler.TypedEnqueueRequestsFromMapFunc(
		func(ctx context.Context, s *corev1.Secret) []reconcile.Request {
			list := newList()
			if err := reader.List(ctx, list, client.InNamespace(s.Namespace), client.MatchingFields{Index: s.Name}); err != nil {
				return nil
			}
			return RequestsFor(list)
		}))
}

// RequestsFor is a request for every object of list.
func RequestsFor(list client.ObjectList) []reconcile.Request {
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(items))
	for _, item := range items {
		o := item.(client.Object)
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}})
	}
	return reqs
}
