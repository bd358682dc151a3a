// Package admission installs the admission policies of config/admission
// into a test control plane, as dist/install.yaml would, so that every tier
// runs against the API server users get.
package admission

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manifest"
)

// enforceTimeout bounds the wait for a new policy to take effect: the API
// server loads policies asynchronously, usually within a second.
const enforceTimeout = 30 * time.Second

// Install creates the policies in <root>/config/admission/policy.yaml and
// returns once the API server enforces them.
func Install(ctx context.Context, c client.Client, root string) error {
	data, err := os.ReadFile(filepath.Join(root, "config", "admission", "policy.yaml"))
	if err != nil {
		return err
	}
	docs, err := manifest.Documents(data)
	if err != nil {
		return err
	}
	for _, doc := range docs {
		var u unstructured.Unstructured
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			return err
		}
		if err := c.Create(ctx, &u); err != nil {
			return err
		}
	}
	if err := until(ctx, "the spec.config policy", func() bool { return configKeysRefused(ctx, c) }); err != nil {
		return err
	}
	return until(ctx, "the finalizer policy", func() bool { return finalizerAdded(ctx, c) })
}

// configKeysRefused: a NatsCluster that sets a key off the allow-list is refused.
func configKeysRefused(ctx context.Context, c client.Client) bool {
	probe := &v1alpha1.NatsCluster{}
	probe.Namespace, probe.Name = "default", "admission-probe"
	probe.Spec.Config = map[string]apiextensionsv1.JSON{"port": {Raw: []byte("1")}}
	err := c.Create(ctx, probe, client.DryRunAll)
	return err != nil && strings.Contains(err.Error(), "spec.config.port is not an allowed passthrough setting")
}

// finalizerAdded: a new Stream comes back with the JetStream finalizer.
func finalizerAdded(ctx context.Context, c client.Client) bool {
	probe := &v1alpha1.Stream{}
	probe.Namespace, probe.Name = "default", "admission-probe"
	probe.Spec.Name = "PROBE"
	probe.Spec.Target.Connection = &v1alpha1.Connection{Servers: []string{"nats://127.0.0.1:4222"}}
	return c.Create(ctx, probe, client.DryRunAll) == nil && slices.Contains(probe.Finalizers, v1alpha1.JetStreamFinalizer)
}

func until(ctx context.Context, what string, check func() bool) error {
	deadline := time.Now().Add(enforceTimeout)
	for !check() {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s was not enforced within %s", what, enforceTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}
