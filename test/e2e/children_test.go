package e2e_test

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// childrenOf are the objects a NatsCluster in auth mode users owns, named
// as the design names them: written out here rather than taken from
// render, so that a child render stops making shows as a failure too.
func childrenOf(c *v1alpha1.NatsCluster) []client.Object {
	om := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: c.Namespace, Name: name} }
	n := c.Name
	return []client.Object{
		&appsv1.StatefulSet{ObjectMeta: om(n)},
		&corev1.Service{ObjectMeta: om(n)},
		&corev1.Service{ObjectMeta: om(n + "-headless")},
		&corev1.ConfigMap{ObjectMeta: om(n + "-config")},
		&corev1.Secret{ObjectMeta: om(n + "-auth")},
		&corev1.Secret{ObjectMeta: om(n + "-system")},
		&corev1.Secret{ObjectMeta: om(n + "-client")},
		&policyv1.PodDisruptionBudget{ObjectMeta: om(n)},
		&corev1.ServiceAccount{ObjectMeta: om(n)},
	}
}

// describe names an object for messages: its Go type and name.
func describe(o client.Object) string {
	return fmt.Sprintf("%s %s", strings.TrimPrefix(fmt.Sprintf("%T", o), "*"), o.GetName())
}

// checkControlled: every child exists, its controller the NatsCluster.
func checkControlled(ctx context.Context, c *v1alpha1.NatsCluster) error {
	for _, o := range childrenOf(c) {
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			return fmt.Errorf("%s: %w", describe(o), err)
		}
		if !metav1.IsControlledBy(o, c) {
			return fmt.Errorf("%s is not controlled by NatsCluster %s: owners %+v", describe(o), c.Name, o.GetOwnerReferences())
		}
	}
	return nil
}

// labelledLeft lists what still carries the cluster's selector labels, of
// every kind the operator or its StatefulSet makes (claims aside): after
// deletion, nothing should, whether or not childrenOf names it.
func labelledLeft(ctx context.Context, c *v1alpha1.NatsCluster) ([]string, error) {
	lists := []client.ObjectList{
		&appsv1.StatefulSetList{}, &corev1.ServiceList{}, &corev1.ConfigMapList{}, &corev1.SecretList{},
		&policyv1.PodDisruptionBudgetList{}, &corev1.ServiceAccountList{}, &corev1.PodList{},
	}
	var left []string
	for _, list := range lists {
		if err := cluster.Client.List(ctx, list, client.InNamespace(c.Namespace), client.MatchingLabels(render.SelectorLabels(c))); err != nil {
			return nil, err
		}
		items, err := apimeta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			left = append(left, describe(item.(client.Object)))
		}
	}
	return left, nil
}
