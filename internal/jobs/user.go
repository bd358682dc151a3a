package jobs

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
)

// User is the NatsUser name of namespace ns that a backup or restore Job
// connects as (auth mode jwt), once it may: of an account on the
// NatsCluster clusterNS/cluster, of account when one is given (a
// Stream's), and Ready, so that its creds Secret is written, with its
// account Ready, so that the cluster admits the account's namespace (the
// account controller decides that, and says so in the account's status).
// Otherwise refusal says why, for the status of a resource that looks
// again shortly; it says nothing of a cluster of another namespace, which
// the tenant may not be let in to.
func User(ctx context.Context, r client.Reader, ns, name, clusterNS, cluster, account string) (_ *v1alpha1.NatsUser, refusal string, _ error) {
	var u v1alpha1.NatsUser
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &u); apierrors.IsNotFound(err) {
		return nil, fmt.Sprintf("NatsUser %s does not exist in this namespace", name), nil
	} else if err != nil {
		return nil, "", err
	}
	if account != "" && u.Spec.Account != account {
		return nil, fmt.Sprintf("NatsUser %s is of account %s, and the stream lives in account %s", name, u.Spec.Account, account), nil
	}
	var a v1alpha1.NatsAccount
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: u.Spec.Account}, &a); apierrors.IsNotFound(err) {
		return nil, fmt.Sprintf("NatsAccount %s of NatsUser %s does not exist in this namespace", u.Spec.Account, name), nil
	} else if err != nil {
		return nil, "", err
	}
	if onNS, on := accounts.ClusterOf(&a); on != cluster || onNS != clusterNS {
		return nil, fmt.Sprintf("NatsUser %s is of account %s, which lives on NatsCluster %s/%s, not on %s/%s", name, a.Name, onNS, on, clusterNS, cluster), nil
	}
	if !meta.IsStatusConditionTrue(a.Status.Conditions, v1alpha1.ConditionReady) {
		return nil, fmt.Sprintf("NatsAccount %s of NatsUser %s is not ready: kubectl describe natsaccount %s says why", a.Name, name, a.Name), nil
	}
	if !meta.IsStatusConditionTrue(u.Status.Conditions, v1alpha1.ConditionReady) || u.Status.CredentialsSecretRef == nil {
		return nil, fmt.Sprintf("NatsUser %s is not ready yet: its credentials are not written", name), nil
	}
	return &u, "", nil
}
