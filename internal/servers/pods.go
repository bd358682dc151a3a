package servers

import (
	"cmp"
	"context"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/plan"
	"github.com/kubenats/kubenats/internal/render"
)

// MemberPods keeps the pods that sts (the cluster's live StatefulSet)
// controls, by the UID of its controller reference; none without one.
func MemberPods(pods []corev1.Pod, sts *appsv1.StatefulSet) []corev1.Pod {
	if sts == nil {
		return nil
	}
	out := make([]corev1.Pod, 0, len(pods))
	for i := range pods {
		if ref := metav1.GetControllerOf(&pods[i]); ref != nil && ref.UID == sts.UID && ref.Kind == "StatefulSet" {
			out = append(out, pods[i])
		}
	}
	return out
}

// ServerPods lists, from cache, the pods sts controls.
func ServerPods(ctx context.Context, cache client.Reader, c *v1alpha1.NatsCluster, sts *appsv1.StatefulSet) ([]corev1.Pod, error) {
	if sts == nil {
		return nil, nil
	}
	var pods corev1.PodList
	if err := cache.List(ctx, &pods, client.InNamespace(c.Namespace), client.MatchingLabels(render.SelectorLabels(c))); err != nil {
		return nil, err
	}
	return MemberPods(pods.Items, sts), nil
}

func PodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ClientTLSServed reads what the servers of a pod template, or of a pod,
// serve on the client port.
func ClientTLSServed(annotations map[string]string, volumes []corev1.Volume) plan.ClientTLSServed {
	served := plan.ClientTLSServed{Found: true, Mark: annotations[render.AnnotationClientTLS]}
	for _, v := range volumes {
		if v.Secret != nil && v.Name == render.ClientTLSVolume {
			served.MountsClientTLS = true
		}
	}
	return served
}

// ServesNoClientTLS reports whether pod's server serves no client TLS: an
// earlier release started it so. The operator's own connections take TLS
// from every other server, and from this one as soon as it offers it.
func ServesNoClientTLS(pod *corev1.Pod) bool {
	return ClientTLSServed(pod.Annotations, pod.Spec.Volumes).ServesNoTLS()
}

// ServerPodAddrs is the pool's ServerPods: the addresses of the pods the
// NatsCluster's own StatefulSet controls (MemberPods: labels alone are a
// claim anyone may make), running and not terminating, ready ones first.
// JetStream resources that name a NatsCluster reach it only there, never
// through its Service, whose endpoints whoever may write EndpointSlices in
// the namespace can point anywhere.
func ServerPodAddrs(cache client.Reader) func(namespace, name string) ([]jetstream.PodAddr, error) {
	return func(namespace, name string) ([]jetstream.PodAddr, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var sts appsv1.StatefulSet
		switch err := cache.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &sts); {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, err
		}
		c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
		var pods corev1.PodList
		if err := cache.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels(render.SelectorLabels(c))); err != nil {
			return nil, err
		}
		return servingAddrs(MemberPods(pods.Items, &sts)), nil
	}
}

// servingAddrs are the addresses of pods that may serve, ready ones first,
// each group in name order, each with whether it serves client TLS (a
// pod an earlier release started may not: ServesNoClientTLS).
func servingAddrs(pods []corev1.Pod) []jetstream.PodAddr {
	pods = slices.DeleteFunc(slices.Clone(pods), func(p corev1.Pod) bool {
		return p.Status.PodIP == "" || !p.DeletionTimestamp.IsZero()
	})
	slices.SortStableFunc(pods, func(a, b corev1.Pod) int {
		if ra, rb := PodReady(&a), PodReady(&b); ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Name, b.Name)
	})
	var out []jetstream.PodAddr
	for i := range pods {
		if a, err := netip.ParseAddr(pods[i].Status.PodIP); err == nil {
			out = append(out, jetstream.PodAddr{Addr: a.Unmap(), ServesNoTLS: ServesNoClientTLS(&pods[i])})
		}
	}
	return out
}
