package natscluster

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/status"
)

// operatorKeysRecheck is how soon a cluster whose operator signing key is
// being rotated is looked at again: servers restarting into new keys and
// accounts signed again raise no event on the NatsCluster.
const operatorKeysRecheck = 5 * time.Second

// rotateOperatorKeys carries out the next step of a rotation of c's NATS
// operator signing key (plan.OperatorKeys, mode jwt) on its trust Secret,
// read from the API server, and returns the OperatorSigningKeyRotated
// verdict (nil before any rotation was asked for) and when to look again.
// It runs after the reload check, which is what tells whether every server
// runs with the keys the Secret lists; the next pass renders nats.conf
// from the Secret as this step left it. A pass that stopped short
// (mayStep false) only reports.
func (r *Reconciler) rotateOperatorKeys(ctx context.Context, c *v1alpha1.NatsCluster, mayStep bool) (*status.Verdict, time.Duration, error) {
	s, foreign, err := r.lookupSecret(ctx, c, c.TrustSecretName())
	if err != nil || s == nil || foreign || accounts.CheckTrust(s.Data) != nil {
		return nil, 0, err // the pass's trust check reports a missing or broken Secret
	}
	values := accounts.TrustValues(s.Data)
	step, err := r.operatorKeysStep(ctx, c, values)
	if err != nil {
		return nil, 0, err
	}
	if mayStep && (step.Begin || step.Promote || step.Drop) {
		next, err := nextOperatorKeys(c, values, step)
		if err != nil {
			return nil, 0, err
		}
		if err := r.writeTrust(ctx, s, next); err != nil {
			return nil, 0, err
		}
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "OperatorSigningKeyRotation", "Rotate", "%s", step.Message)
		if step, err = r.operatorKeysStep(ctx, c, next); err != nil {
			return nil, 0, err
		}
	}
	if step.Reason == "" {
		return nil, 0, nil
	}
	v := &status.Verdict{Type: v1alpha1.ConditionOperatorSigningKeyRotated, Status: metav1.ConditionFalse, Reason: step.Reason, Message: step.Message}
	if step.Done {
		v.Status = metav1.ConditionTrue
		return v, 0, nil
	}
	return v, operatorKeysRecheck, nil
}

// operatorKeysStep observes a rotation: the request on c, the keys in
// values, whether every server confirmed it runs with them, and which of
// c's accounts are not yet signed by the signing key.
func (r *Reconciler) operatorKeysStep(ctx context.Context, c *v1alpha1.NatsCluster, values map[string]string) (plan.OperatorKeysStep, error) {
	k := accounts.ReadOperatorKeys(values)
	o := plan.OperatorKeysObservation{Begun: k.Rotation, Next: k.Next != "", Previous: k.Previous != "",
		ServersTrust: r.reloads.confirmedMark(c.UID, render.MetadataOperatorKeysKey, render.OperatorKeysMark(values))}
	if v := c.Annotations[v1alpha1.AnnotationRotateOperatorSigningKey]; v != "" {
		o.Requested = accounts.RotationRequest(v)
	}
	if o.Previous {
		_, signer, err := accounts.OperatorSigner(values)
		if err != nil {
			return plan.OperatorKeysStep{}, err
		}
		if o.Accounts, o.Unsigned, err = r.accountsNotSignedBy(ctx, c, signer); err != nil {
			return plan.OperatorKeysStep{}, err
		}
	}
	return plan.OperatorKeys(o), nil
}

// nextOperatorKeys are the trust Secret's values after step.
func nextOperatorKeys(c *v1alpha1.NatsCluster, values map[string]string, step plan.OperatorKeysStep) (map[string]string, error) {
	switch {
	case step.Begin:
		return accounts.BeginOperatorRotation(values, accounts.RotationRequest(c.Annotations[v1alpha1.AnnotationRotateOperatorSigningKey]))
	case step.Promote:
		return accounts.PromoteOperatorKey(values)
	default:
		return accounts.DropPreviousOperatorKey(values)
	}
}

// writeTrust writes values into the trust Secret s as read, refused if
// it changed since: a step is decided on what was read.
func (r *Reconciler) writeTrust(ctx context.Context, s *corev1.Secret, values map[string]string) error {
	before := s.DeepCopy()
	s.Data = make(map[string][]byte, len(values))
	for k, v := range values {
		s.Data[k] = []byte(v)
	}
	return r.Patch(ctx, s, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// accountsNotSignedBy counts the accounts the rotation waits for
// (accounts.AwaitedAccounts: live, with keys, of a namespace c admits)
// and names those whose JWT the servers last took was not signed by
// signer. The labels of a namespace are read only where c's selector
// decides.
func (r *Reconciler) accountsNotSignedBy(ctx context.Context, c *v1alpha1.NatsCluster, signer string) (int, []string, error) {
	var list v1alpha1.NatsAccountList
	if err := r.List(ctx, &list); err != nil {
		return 0, nil, err
	}
	labels := map[string]map[string]string{}
	for i := range list.Items {
		a := &list.Items[i]
		if ns, name := accounts.ClusterOf(a); ns != c.Namespace || name != c.Name {
			continue
		}
		if _, read := labels[a.Namespace]; read || !accounts.NeedsNamespaceLabels(c, a.Namespace) {
			continue
		}
		var ns corev1.Namespace
		if err := r.APIReader.Get(ctx, client.ObjectKey{Name: a.Namespace}, &ns); client.IgnoreNotFound(err) != nil {
			return 0, nil, err
		}
		labels[a.Namespace] = ns.Labels
	}
	total, unsigned := accounts.AwaitedAccounts(c, list.Items, labels, signer)
	return total, unsigned, nil
}
