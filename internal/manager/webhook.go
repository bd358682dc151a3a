package manager

import (
	"errors"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/fields"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/internal/webhook"
)

// The webhook's configuration is read and patched by name only: the role
// names it, and the cache lists it with a field selector on that name,
// which RBAC admits for resourceNames.
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;list;watch;patch,resourceNames=kubenats

// webhookEnabled: a listener given, or an address other than "" and "0".
func webhookEnabled(o Options) bool {
	return o.WebhookListener != nil || (o.WebhookBindAddress != "" && o.WebhookBindAddress != "0")
}

// checkWebhook refuses a webhook the operator could not serve: it needs
// its namespace, the names of its certificate, and that namespace among
// those it watches (its Secret is read from the cache).
func checkWebhook(o Options) error {
	switch {
	case !webhookEnabled(o):
		return nil
	case o.Namespace == "":
		return errors.New("the webhook needs the operator's namespace (--namespace, or POD_NAMESPACE)")
	case len(o.WebhookCertNames) == 0:
		return errors.New("the webhook needs the names of its certificate (--webhook-cert-names)")
	case len(o.WatchNamespaces) > 0 && !slices.Contains(o.WatchNamespaces, o.Namespace):
		return errors.New("the webhook keeps its certificate in the operator's namespace, which --watch-namespaces leaves out: add it, or turn the webhook off (--webhook-bind-address=0)")
	}
	return nil
}

// webhookCache is what the caches hold for the webhook: its configuration,
// by name (it is cluster-scoped; its Secret is among the labelled ones).
func webhookCache(o Options, byObject map[client.Object]cache.ByObject) {
	if webhookEnabled(o) {
		byObject[&admissionregistrationv1.ValidatingWebhookConfiguration{}] = cache.ByObject{
			Field: fields.OneTermEqualSelector("metadata.name", webhook.ConfigurationName),
		}
	}
}

// setupWebhook serves the webhook on every replica and keeps its
// certificate on the leader.
func setupWebhook(mgr ctrl.Manager, o Options) error {
	if !webhookEnabled(o) {
		return nil
	}
	keeper := &webhook.CertKeeper{Client: mgr.GetClient(), Namespace: o.Namespace, Names: o.WebhookCertNames}
	if err := keeper.SetupWithManager(mgr); err != nil {
		return err
	}
	return mgr.Add(&webhook.Server{
		Listener:  o.WebhookListener,
		Addr:      o.WebhookBindAddress,
		Cache:     mgr.GetCache(),
		Namespace: o.Namespace,
		Reader:    mgr.GetAPIReader(),
	})
}
