// Package usersecrets reads the Secrets their owners opted in for kubenats
// (SecretAllowLabel), the only user Secrets the operator reads, and wakes
// the objects that name one when it changes.
package usersecrets

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// Usable reports whether a user's Secret may be used: its owner
// labelled it for kubenats, it is of a type that holds plain credentials or
// certificates, and kubenats did not make it. A Secret the operator
// generated (a cluster's system password, say) is never usable by
// reference: a tenant could otherwise send it to a server of its choice.
func Usable(s *corev1.Secret) bool {
	if s.Labels[v1alpha1.SecretAllowLabel] != v1alpha1.SecretAllowValue {
		return false
	}
	switch s.Type {
	case "", corev1.SecretTypeOpaque, corev1.SecretTypeTLS:
	default:
		return false // service-account tokens, registry credentials, ...
	}
	if s.Labels[render.LabelManagedBy] == render.ManagedBy {
		return false
	}
	if ref := metav1.GetControllerOf(s); ref != nil && ref.APIVersion == v1alpha1.GroupVersion.String() {
		return false
	}
	return true
}

// Refusal is the one message for every Secret that cannot be used,
// missing or not: telling them apart would reveal what a tenant may not
// read (whether it exists, its type, its keys).
func Refusal(field, name string) string {
	return fmt.Sprintf("%s: no Secret %q that kubenats may use; it must exist in this namespace, be of type Opaque or kubernetes.io/tls, and carry the label %s: %q",
		field, name, v1alpha1.SecretAllowLabel, v1alpha1.SecretAllowValue)
}

// Get reads a user's Secret from the cache of opted-in Secrets: the
// operator holds no other. refusal is set when the Secret is missing, not
// opted in, or of a kind kubenats never uses.
func Get(ctx context.Context, r client.Reader, ns, name, field string) (_ *corev1.Secret, refusal string, _ error) {
	var s corev1.Secret
	err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s)
	if apierrors.IsNotFound(err) || (err == nil && !Usable(&s)) {
		return nil, Refusal(field, name), nil
	}
	if err != nil {
		return nil, "", err
	}
	return &s, "", nil
}

// Refused is the refusal of the first of the named Secrets (pairs of a
// name and its field; an empty name is skipped) that cannot be used, or
// "" when all can.
func Refused(ctx context.Context, r client.Reader, ns string, nameAndField ...string) (string, error) {
	for i := 0; i+1 < len(nameAndField); i += 2 {
		if nameAndField[i] == "" {
			continue
		}
		if _, refusal, err := Get(ctx, r, ns, nameAndField[i], nameAndField[i+1]); err != nil || refusal != "" {
			return refusal, err
		}
	}
	return "", nil
}
