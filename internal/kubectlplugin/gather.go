package kubectlplugin

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// Cluster is what the plugin shows of one NatsCluster: the resource, its
// server pods and the JetStream resources that name it.
type Cluster struct {
	NatsCluster v1alpha1.NatsCluster
	Pods        []corev1.Pod
	JetStream   []Resource
}

// Resource is one JetStream resource as the plugin lists it.
type Resource struct {
	Kind, Namespace, Name string
	Status                v1alpha1.JetStreamStatus
	Annotations           map[string]string
}

// gather reads the NatsCluster ns/name, its pods, and the JetStream
// resources of every namespace the reader may list that name it.
func gather(ctx context.Context, c client.Reader, ns, name string) (*Cluster, error) {
	out := &Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &out.NatsCluster); err != nil {
		return nil, fmt.Errorf("NatsCluster %s/%s: %w", ns, name, err)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(render.SelectorLabels(&out.NatsCluster))); err != nil {
		return nil, fmt.Errorf("pods: %w", err)
	}
	out.Pods = pods.Items
	sort.Slice(out.Pods, func(i, j int) bool { return out.Pods[i].Name < out.Pods[j].Name })
	// Every namespace may hold resources that name the cluster; a user
	// who may list only the cluster's own sees those.
	resources, err := jetStreamResources(ctx, c, "")
	if apierrors.IsForbidden(err) {
		resources, err = jetStreamResources(ctx, c, ns)
	}
	if err != nil {
		return nil, err
	}
	for _, r := range resources {
		if t := r.target; t.Cluster != nil && t.Cluster.Name == name && namespaceOr(t.Cluster.Namespace, r.Namespace) == ns {
			out.JetStream = append(out.JetStream, r.Resource)
		}
	}
	return out, nil
}

type targeted struct {
	Resource
	target v1alpha1.Target
}

// jetStreamResources lists the four JetStream kinds in ns ("" for all).
func jetStreamResources(ctx context.Context, c client.Reader, ns string) ([]targeted, error) {
	var out []targeted
	add := func(kind string, o v1alpha1.JetStreamObject) {
		out = append(out, targeted{Resource: Resource{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName(),
			Status: *o.GetJetStreamStatus(), Annotations: o.GetAnnotations()}, target: o.GetTarget()})
	}
	opts := []client.ListOption{}
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	var streams v1alpha1.StreamList
	if err := c.List(ctx, &streams, opts...); err != nil {
		return nil, fmt.Errorf("streams: %w", err)
	}
	for i := range streams.Items {
		add("Stream", &streams.Items[i])
	}
	var consumers v1alpha1.ConsumerList
	if err := c.List(ctx, &consumers, opts...); err != nil {
		return nil, fmt.Errorf("consumers: %w", err)
	}
	for i := range consumers.Items {
		add("Consumer", &consumers.Items[i])
	}
	var kvs v1alpha1.KeyValueList
	if err := c.List(ctx, &kvs, opts...); err != nil {
		return nil, fmt.Errorf("key-value buckets: %w", err)
	}
	for i := range kvs.Items {
		add("KeyValue", &kvs.Items[i])
	}
	var objs v1alpha1.ObjectStoreList
	if err := c.List(ctx, &objs, opts...); err != nil {
		return nil, fmt.Errorf("object stores: %w", err)
	}
	for i := range objs.Items {
		add("ObjectStore", &objs.Items[i])
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out, nil
}

func namespaceOr(ns, fallback string) string {
	if ns == "" {
		return fallback
	}
	return ns
}
