package servers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// LookupSecret is the Secret of that name the operator made for c, or nil;
// foreign reports a Secret of that name that c does not control. It is read
// from the API server, not from the cache, one read per generated Secret
// and pass: the cache may not hold a Secret created a moment ago (a value
// made twice would give the servers started in between other credentials,
// or another CA, than the rest), and may still hold one deleted a moment
// ago (applying its value would re-create it unseen, where a deletion must
// be reported: missingGenerated).
func LookupSecret(ctx context.Context, apiReader client.Reader, c *v1alpha1.NatsCluster, name string) (_ *corev1.Secret, foreign bool, _ error) {
	var s corev1.Secret
	err := apiReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, &s)
	switch {
	case apierrors.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	case !metav1.IsControlledBy(&s, c):
		return nil, true, nil
	}
	return &s, false, nil
}

// ownedSecret is the Secret of that name the operator made for c, or nil.
func ownedSecret(ctx context.Context, apiReader client.Reader, c *v1alpha1.NatsCluster, name string) (*corev1.Secret, error) {
	s, _, err := LookupSecret(ctx, apiReader, c, name)
	return s, err
}
