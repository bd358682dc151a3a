package webhook

import (
	"context"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// AccountReferences reviews the creation of an object that names a
// NatsAccount.
type AccountReferences struct {
	// Reader reads past the cache: an account created a moment before its
	// user (one kubectl apply of both) may not be in the cache yet, and
	// must not be refused.
	Reader client.Reader
}

var _ admission.Handler = (*AccountReferences)(nil)

// Handle answers one review.
func (a *AccountReferences) Handle(ctx context.Context, req admission.Request) admission.Response {
	r, err := readReviewed(req.Object.Raw)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if !needsLookup(req.Operation, req.Namespace, r) {
		return Decide(req.Namespace, r.account, NotAsked)
	}
	return Decide(req.Namespace, r.account, a.lookup(ctx, req.Namespace, r.account))
}

// lookup asks for the account's metadata only: whether it exists is all
// the review needs.
func (a *AccountReferences) lookup(ctx context.Context, namespace, name string) Lookup {
	found := &metav1.PartialObjectMetadata{}
	found.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("NatsAccount"))
	err := a.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, found)
	switch {
	case err == nil:
		return Found
	case apierrors.IsNotFound(err):
		return Missing
	}
	return Unanswered
}
