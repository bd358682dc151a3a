package webhook

import (
	"bytes"
	"context"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kubenats/kubenats/internal/render"
)

// CertKeeper keeps the serving certificate's Secret issued and the
// webhook configuration's CA bundle equal to the Secret's. It runs on the
// leader; its reads come from the cache, which holds the Secret (labelled
// as kubenats') and the configuration (selected by name), and its writes
// carry the resource version they were decided on, so that two replicas
// never both issue.
type CertKeeper struct {
	Client    client.Client
	Namespace string
	// Names are what the certificate is for: the webhook Service's DNS
	// name as the API server dials it.
	Names []string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Reconcile issues what is due, then brings the CA bundle in line.
func (k *CertKeeper) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	secret := &corev1.Secret{}
	err := k.Client.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: SecretName}, secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	exists := err == nil
	plan, err := PlanServingCert(secret.Data, k.Names, k.now())
	if err != nil {
		return reconcile.Result{}, err
	}
	if plan.Data != nil {
		// The write's watch event brings the next pass, which sets the bundle.
		log.Info("issuing the webhook's serving certificate", "why", plan.Why)
		err := k.writeSecret(ctx, secret, exists, plan.Data)
		if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
			// Decided on a cache behind the API server: decide again
			// once it has caught up.
			return reconcile.Result{RequeueAfter: time.Second}, nil
		}
		return reconcile.Result{}, err
	}
	if err := k.setCABundle(ctx, caBundle(secret.Data)); apierrors.IsConflict(err) {
		return reconcile.Result{RequeueAfter: time.Second}, nil
	} else if err != nil {
		return reconcile.Result{}, err
	}
	at, _ := renewAt(secret.Data)
	return reconcile.Result{RequeueAfter: max(time.Until(at), time.Second)}, nil
}

func (k *CertKeeper) writeSecret(ctx context.Context, found *corev1.Secret, exists bool, data map[string][]byte) error {
	if !exists {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: SecretName,
				Labels: map[string]string{render.LabelManagedBy: render.ManagedBy}},
			Type: corev1.SecretTypeTLS,
			Data: data,
		}
		return k.Client.Create(ctx, s)
	}
	next := found.DeepCopy()
	next.Data = data
	return k.Client.Patch(ctx, next, client.MergeFromWithOptions(found, client.MergeFromWithOptimisticLock{}))
}

// setCABundle writes bundle into every webhook of the configuration that
// trusts something else. A configuration not installed is nothing to do:
// the certificate is still kept, for an install that adds it later.
func (k *CertKeeper) setCABundle(ctx context.Context, bundle []byte) error {
	found := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	err := k.Client.Get(ctx, client.ObjectKey{Name: ConfigurationName}, found)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	next := found.DeepCopy()
	changed := false
	for i := range next.Webhooks {
		if !bytes.Equal(next.Webhooks[i].ClientConfig.CABundle, bundle) {
			next.Webhooks[i].ClientConfig.CABundle, changed = bundle, true
		}
	}
	if !changed {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("trusting the webhook's CA in its configuration", "configuration", ConfigurationName)
	return k.Client.Patch(ctx, next, client.MergeFromWithOptions(found, client.MergeFromWithOptimisticLock{}))
}

func (k *CertKeeper) now() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}

// SetupWithManager runs the keeper on the leader: once at its start (there
// may be no Secret yet to watch), when the Secret changes, and when the
// configuration does (something that replaced it without the CA bundle).
func (k *CertKeeper) SetupWithManager(mgr ctrl.Manager) error {
	start := make(chan event.GenericEvent, 1)
	start <- event.GenericEvent{Object: &corev1.Secret{}}
	one := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: k.Namespace, Name: SecretName}}}
	})
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == k.Namespace && o.GetName() == SecretName
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("webhook-certificate").
		WatchesRawSource(source.Channel(start, one)).
		Watches(&corev1.Secret{}, one, builder.WithPredicates(ours)).
		Watches(&admissionregistrationv1.ValidatingWebhookConfiguration{}, one).
		Complete(k)
}
