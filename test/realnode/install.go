package realnode

import (
	"context"
	"fmt"
	"os"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/internal/manifest"
)

// ApplyInstall applies the install as shipped, as `kubectl apply
// --server-side` would: the Namespace and CRDs first, established, then
// everything else.
func ApplyInstall(ctx context.Context, c client.Client, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	docs, err := manifest.Documents(data)
	if err != nil {
		return err
	}
	var first, rest []*unstructured.Unstructured
	for _, doc := range docs {
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			return err
		}
		if u.GetKind() == "Namespace" || u.GetKind() == "CustomResourceDefinition" {
			first = append(first, u)
		} else {
			rest = append(rest, u)
		}
	}
	apply := func(objs []*unstructured.Unstructured) error {
		for _, u := range objs {
			if err := c.Patch(ctx, u, client.Apply, client.FieldOwner("realnode-test"), client.ForceOwnership); err != nil {
				return fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
			}
		}
		return nil
	}
	if err := apply(first); err != nil {
		return err
	}
	for _, u := range first {
		if u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		if err := until(ctx, time.Minute, func() error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: u.GetName()}, crd); err != nil {
				return err
			}
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
			return fmt.Errorf("CRD %s not established", u.GetName())
		}); err != nil {
			return err
		}
	}
	return apply(rest)
}

// until calls check until it returns nil, or the timeout or ctx ends.
func until(ctx context.Context, timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}
