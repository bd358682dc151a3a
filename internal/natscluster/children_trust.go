package natscluster

import (
	corev1 "k8s.io/api/core/v1"

	"context"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
	"github.com/kubenats/kubenats/internal/status"
)

// trust is the trust Secret's values (mode jwt): read from the Secret the
// operator made, or made once for servers yet to start. Like the
// passwords of mode users, a trust Secret deleted under running servers
// is not made anew without the user's word (missingGenerated): new keys
// would lock out every account and user. A Secret whose values do not
// hold together is refused, naming the key, never a value.
func (r *Reconciler) trust(ctx context.Context, c *v1alpha1.NatsCluster, used map[string]bool, read map[string]*corev1.Secret) (map[string]string, *status.Blocker, error) {
	name := c.TrustSecretName()
	s, foreign, err := r.lookupSecret(ctx, c, name)
	if err != nil {
		return nil, nil, err
	}
	if s != nil {
		read[name] = s
		if err := accounts.CheckTrust(s.Data); err != nil {
			return nil, &status.Blocker{Reason: v1alpha1.ReasonSecretInvalid, Fatal: true, Message: name + ": " + err.Error()}, nil
		}
		return accounts.TrustValues(s.Data), nil, nil
	}
	if !foreign {
		if b := r.missingGenerated(c, name, used); b != nil {
			return nil, b, nil
		}
	}
	values, err := accounts.NewTrust(c.Namespace + "/" + c.Name)
	return values, nil, err
}
