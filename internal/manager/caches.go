package manager

// The caches the manager reads through, and its leader election's timings.

import (
	"time"

	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natscluster"
	"github.com/kubenats/kubenats/internal/render"
)

// userSecretCache holds the Secrets their owners opted in for kubenats, and
// no other: a second cache, since one cache selects one label per kind and
// the main one holds the Secrets kubenats made. The manager starts it.
func userSecretCache(mgr ctrl.Manager, watch []string) (cache.Cache, error) {
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient:        mgr.GetHTTPClient(),
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultNamespaces: namespaces(watch),
		ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {
			Label: labels.SelectorFromSet(labels.Set{v1alpha1.SecretAllowLabel: v1alpha1.SecretAllowValue}),
		}},
		DefaultTransform: cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, err
	}
	return c, mgr.Add(c)
}

// namespaces is the caches' namespace selection: nil for all.
func namespaces(watch []string) map[string]cache.Config {
	if len(watch) == 0 {
		return nil
	}
	out := make(map[string]cache.Config, len(watch))
	for _, ns := range watch {
		out[ns] = cache.Config{}
	}
	return out
}

// ownedOnly limits the caches of the kinds kubenats creates to the objects
// it labelled: the operator then holds no other Secret in memory, and its
// memory does not grow with the size of the cluster it runs in.
//
// Istio's PeerAuthentications are among them only when Istio's CRDs are
// installed as the operator starts (the cache refuses a kind the API server
// does not serve); installed later, its cache of them is unfiltered.
func ownedOnly(istio bool) map[client.Object]cache.ByObject {
	ours := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{render.LabelManagedBy: render.ManagedBy})}
	out := map[client.Object]cache.ByObject{
		&corev1.Secret{}:                ours,
		&corev1.ConfigMap{}:             ours,
		&corev1.Service{}:               ours,
		&corev1.ServiceAccount{}:        ours,
		&corev1.Pod{}:                   ours,
		&appsv1.StatefulSet{}:           ours,
		&batchv1.Job{}:                  ours,
		&policyv1.PodDisruptionBudget{}: ours,
		&networkingv1.NetworkPolicy{}:   ours,
		&networkingv1.Ingress{}:         ours,
	}
	if istio {
		out[&securityv1.PeerAuthentication{}] = ours
	}
	return out
}

// leaseDuration is the lease's duration, nil for controller-runtime's.
func leaseDuration(d time.Duration) *time.Duration {
	if d <= 0 {
		return nil
	}
	return &d
}

// leaseShare is fifteenths of a lease's duration, nil for
// controller-runtime's: its defaults are a 15 s lease renewed within 10 s
// and tried every 2 s, and a shorter lease keeps those proportions (a
// leader gives up two thirds into a lease it could not renew, before
// anyone else may take it).
func leaseShare(d time.Duration, fifteenths int64) *time.Duration {
	if d <= 0 {
		return nil
	}
	r := d * time.Duration(fifteenths) / 15
	return &r
}

// nodeZones reads the nodes' zones through the manager's cache (metadata
// only). A namespaced install may not read nodes: nil there, and the
// servers' own zones decide.
func nodeZones(mgr ctrl.Manager, watch []string) *natscluster.NodeZones {
	if len(watch) > 0 {
		return nil
	}
	return &natscluster.NodeZones{Reader: mgr.GetClient()}
}
