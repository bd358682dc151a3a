package controller

import (
	"cmp"
	"context"
	"net/netip"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/render"
)

// ServerPodAddrs is the pool's ServerPods: the addresses of the pods the
// NatsCluster's own StatefulSet controls (memberPods: labels alone are a
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
		return servingAddrs(memberPods(pods.Items, &sts)), nil
	}
}

// servingAddrs are the addresses of pods that may serve, ready ones first,
// each group in name order, each with whether it serves client TLS (a
// pod an earlier release started may not: servesNoClientTLS).
func servingAddrs(pods []corev1.Pod) []jetstream.PodAddr {
	pods = slices.DeleteFunc(slices.Clone(pods), func(p corev1.Pod) bool {
		return p.Status.PodIP == "" || !p.DeletionTimestamp.IsZero()
	})
	slices.SortStableFunc(pods, func(a, b corev1.Pod) int {
		if ra, rb := podReady(&a), podReady(&b); ra != rb {
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
			out = append(out, jetstream.PodAddr{Addr: a.Unmap(), ServesNoTLS: servesNoClientTLS(&pods[i])})
		}
	}
	return out
}
