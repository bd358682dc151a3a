package main

import (
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// samples reads the production NatsCluster sample, made small enough for
// one machine, and the Stream and Consumer samples, in that order.
func samples() ([]client.Object, error) {
	var c v1alpha1.NatsCluster
	var s v1alpha1.Stream
	var k v1alpha1.Consumer
	for path, into := range map[string]any{clusterSample: &c, streamSample: &s, consumerSample: &k} {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if err := yaml.UnmarshalStrict(data, into); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	// The production sample asks for 4Gi and a whole CPU per server, sized
	// for real traffic; three of those would not fit a laptop. Nothing else
	// changes.
	small := resource.MustParse("256Mi")
	c.Spec.Resources = &corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: small},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: small},
	}
	c.Spec.JetStream.MemoryStore = &v1alpha1.MemoryStoreSpec{Size: resource.MustParse("64Mi")}
	c.Spec.JetStream.FileStore.Size = ptrTo(resource.MustParse("1Gi"))
	say("%s: resources shrunk to 100m CPU, 256Mi memory, 64Mi memory store and 1Gi file store per server", clusterSample)
	out := []client.Object{&c, &s, &k}
	for _, o := range out {
		o.SetNamespace(ns)
	}
	return out, nil
}

func ptrTo[T any](v T) *T { return &v }

// kindOf is the kind of a typed object for messages.
func kindOf(o client.Object) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", o), "*v1alpha1.")
}
