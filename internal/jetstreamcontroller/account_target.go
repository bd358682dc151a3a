package jetstreamcontroller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/render"
)

// accountConn dials a NatsCluster in auth mode jwt as the operator's own
// user of account, a NatsAccount of the resource's namespace ns: the
// object lives in that account and is managed with its rights alone.
//
// The account is the permission: a Ready NatsAccount of ns on the cluster
// ref names means the cluster admits ns (spec.auth.accounts), and it is
// looked up first, in the tenant's own namespace, so that nothing here
// tells a tenant whether a cluster it may not use exists.
func (r *Base) accountConn(ctx context.Context, ns string, ref v1alpha1.ClusterRef, account string) (jetstream.ConnSpec, *targetProblem, error) {
	if ref.Namespace == "" {
		ref.Namespace = ns
	}
	var a v1alpha1.NatsAccount
	switch err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: account}, &a); {
	case apierrors.IsNotFound(err):
		return jetstream.ConnSpec{}, &targetProblem{reason: reasonNotAllowed, gone: true,
			message: fmt.Sprintf("NatsAccount %s is not in this namespace", account)}, nil
	case err != nil:
		return jetstream.ConnSpec{}, nil, err
	case !a.DeletionTimestamp.IsZero():
		return jetstream.ConnSpec{}, &targetProblem{reason: reasonNotAllowed, gone: true,
			message: fmt.Sprintf("NatsAccount %s is being deleted", account)}, nil
	}
	if cns, cname := accounts.ClusterOf(&a); cns != ref.Namespace || cname != ref.Name {
		return jetstream.ConnSpec{}, &targetProblem{reason: reasonNotAllowed, message: fmt.Sprintf(
			"NatsAccount %s lives on NatsCluster %s/%s, not on %s/%s", account, cns, cname, ref.Namespace, ref.Name)}, nil
	}
	if !meta.IsStatusConditionTrue(a.Status.Conditions, v1alpha1.ConditionReady) {
		return jetstream.ConnSpec{}, &targetProblem{reason: reasonClusterNotReady, message: fmt.Sprintf(
			"NatsAccount %s is not ready", account)}, nil
	}
	var c v1alpha1.NatsCluster
	switch err := r.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &c); {
	case apierrors.IsNotFound(err):
		return jetstream.ConnSpec{}, &targetProblem{reason: reasonClusterNotReady, message: fmt.Sprintf(
			"NatsCluster %s/%s of NatsAccount %s is not there", ref.Namespace, ref.Name, account)}, nil
	case err != nil:
		return jetstream.ConnSpec{}, nil, err
	}
	if !c.HasTrust() {
		return jetstream.ConnSpec{}, &targetProblem{reason: reasonNotAllowed, message: fmt.Sprintf(
			"account applies to a NatsCluster in auth mode jwt; %s/%s is not", ref.Namespace, ref.Name)}, nil
	}
	var keys corev1.Secret
	acct := accounts.AccountRef{Namespace: ns, Name: account}
	err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: accounts.KeysSecretName(c.Name, acct)}, &keys)
	if client.IgnoreNotFound(err) != nil {
		return jetstream.ConnSpec{}, nil, err
	}
	var creds []byte
	if err == nil && metav1.IsControlledBy(&keys, &c) {
		// Only keys recorded for exactly this account: never another
		// account's rights for this one's objects.
		if k, err := accounts.ReadAccountKeysFor(acct, a.Status.PublicKey, keys.Data); err == nil {
			creds = k.OperatorCreds
		}
	}
	if len(creds) == 0 {
		return jetstream.ConnSpec{}, &targetProblem{reason: reasonClusterNotReady, message: fmt.Sprintf(
			"NatsAccount %s: the operator's user in it is not issued yet", account)}, nil
	}
	spec := jetstream.ConnSpec{
		System:  "natscluster/" + ref.Namespace + "/" + ref.Name + "/account/" + ns + "/" + account,
		Servers: []string{render.InternalURL(&c)},
		Pinned:  ref.Namespace + "/" + ref.Name,
		Domain:  c.Spec.JetStream.Domain,
		Creds:   creds,
	}
	if problem := r.clientTLS(ctx, &c, &spec, true); problem != nil {
		return jetstream.ConnSpec{}, problem, nil
	}
	return spec, nil, nil
}
