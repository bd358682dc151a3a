// Package apply is the operator's one way to write an object it owns:
// server-side apply under the field manager "kubenats", the owner reference
// set here and nowhere else, and ownership checked first, failing closed.
package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubenats/kubenats/internal/manifest"
)

// FieldManager is the one field manager kubenats writes with.
const FieldManager = "kubenats"

// Applier applies objects owned by a custom resource.
type Applier struct {
	// Client writes, and reads from the informer cache.
	Client client.Client
	// APIReader reads past the cache. The caches hold only objects labelled
	// as kubenats', so an object missing there may still exist unlabelled.
	APIReader client.Reader
	Scheme    *runtime.Scheme
}

// ConflictError says that an object with the name the operator wants exists
// and belongs to someone else. Nothing was written.
type ConflictError struct {
	Kind, Name string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %q exists and is not owned by this resource: rename or remove it", e.Kind, e.Name)
}

// Apply server-side-applies obj, owned by owner, after checking that any live
// object of that name is already owner's.
func (a *Applier) Apply(ctx context.Context, owner, obj client.Object) error {
	if err := a.checkOwnership(ctx, owner, obj); err != nil {
		return err
	}
	if err := controllerutil.SetControllerReference(owner, obj, a.Scheme); err != nil {
		return err
	}
	u, err := manifest.Unstructured(obj)
	if err != nil {
		return err
	}
	return a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(FieldManager), client.ForceOwnership)
}

// checkOwnership fails closed: an existing object that owner does not
// control is never overwritten.
func (a *Applier) checkOwnership(ctx context.Context, owner, obj client.Object) error {
	live, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("%T is not a client.Object", obj)
	}
	key := client.ObjectKeyFromObject(obj)
	err := a.Client.Get(ctx, key, live)
	if apierrors.IsNotFound(err) {
		// Not in the cache: new, or there without our labels.
		err = a.APIReader.Get(ctx, key, live)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	case metav1.IsControlledBy(live, owner):
		return nil
	}
	gvk, _ := apiutil.GVKForObject(obj, a.Scheme)
	return &ConflictError{Kind: gvk.Kind, Name: obj.GetName()}
}
