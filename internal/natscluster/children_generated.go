package natscluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/status"
)

// A Secret the operator generated (a password, the route CA) that is
// deleted while servers run with its value is not made anew: a new route
// password or CA restarts every server, and a new client password locks out
// every client that holds the old one, all because of one kubectl delete.
// The servers keep running as they are (nothing is applied while the
// Secret is missing, so neither the pods nor their files change), the
// cluster says so (Ready False, GeneratedSecretMissing, and a Warning
// event), and the user decides, with the annotation below, which Secrets
// may be made anew. A Secret re-created by hand without the cluster as its
// controller is not adopted (it reads as a name conflict).

// AnnotationRegenerateSecrets lists (comma-separated) the generated Secrets
// the operator may make anew, with new values, when they are missing from
// running servers. Changing it wakes the operator.
const AnnotationRegenerateSecrets = "kubenats.io/regenerate-secrets"

// serversUse reports which Secrets the running servers were configured
// with: those the live StatefulSet's pod template reads (environment,
// volumes, projections). Only such a Secret is "deleted under running
// servers"; one they never read (route credentials before a scale-out from
// one server, the CA before route TLS is turned on) is simply made. A
// StatefulSet the cache has not seen yet (created a moment ago) is looked
// for on the API server.
func (r *Reconciler) serversUse(ctx context.Context, c *v1alpha1.NatsCluster) (map[string]bool, error) {
	var sts appsv1.StatefulSet
	key := client.ObjectKey{Namespace: c.Namespace, Name: c.StatefulSetName()}
	err := r.Get(ctx, key, &sts)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, &sts)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case !metav1.IsControlledBy(&sts, c):
		return nil, nil
	}
	used := readSecrets(&sts.Spec.Template.Spec)
	if c.HasTrust() {
		// No pod mounts the trust Secret, but the nats.conf they read
		// trusts its operator key, and every account JWT on the servers
		// is signed by it: new keys would lock every account out.
		if used == nil {
			used = map[string]bool{}
		}
		used[c.TrustSecretName()] = true
	}
	return used, nil
}

// readSecrets are the Secrets a pod spec reads, by name.
func readSecrets(spec *corev1.PodSpec) map[string]bool {
	out := map[string]bool{}
	for _, ctr := range spec.Containers {
		for _, e := range ctr.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				out[e.ValueFrom.SecretKeyRef.Name] = true
			}
		}
	}
	for _, v := range spec.Volumes {
		if v.Secret != nil {
			out[v.Secret.SecretName] = true
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.Secret != nil {
					out[src.Secret.Name] = true
				}
			}
		}
	}
	return out
}

// usedBy reports whether the servers run with the value of the generated
// Secret name: they read it, or the file made from it (users.conf holds
// the client and system passwords; the route certificate was signed by
// the CA).
func usedBy(c *v1alpha1.NatsCluster, used map[string]bool, name string) bool {
	switch name {
	case c.SystemSecretName(), c.AuthSecretName():
		return used[name] || used[c.UsersSecretName()]
	case c.CASecretName():
		return used[c.RouteTLSSecretName()]
	case c.ClientCASecretName():
		return used[c.ClientTLSSecretName()]
	}
	return used[name]
}

// missingGenerated is the blocker for a generated Secret that is gone from
// running servers, nil when it may be made (no servers yet, or the user
// asked for it).
func (r *Reconciler) missingGenerated(c *v1alpha1.NatsCluster, name string, used map[string]bool) *status.Blocker {
	if !usedBy(c, used, name) || regenerationAllowed(c, name) {
		return nil
	}
	msg := fmt.Sprintf("Secret %s, which the running servers were configured with, was deleted; kubenats changes nothing meanwhile. "+
		"Restore it, or let kubenats make new values (the servers restart or reload with them) with the annotation %s: %s",
		name, AnnotationRegenerateSecrets, name)
	r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, v1alpha1.ReasonGeneratedSecretMissing, "Regenerate", "%s", msg)
	return &status.Blocker{Reason: v1alpha1.ReasonGeneratedSecretMissing, Fatal: true, Message: msg}
}

// regenerationAllowed reports whether the user listed name for new values.
func regenerationAllowed(c *v1alpha1.NatsCluster, name string) bool {
	list := strings.Split(c.Annotations[AnnotationRegenerateSecrets], ",")
	return slices.ContainsFunc(list, func(s string) bool { return strings.TrimSpace(s) == name })
}
