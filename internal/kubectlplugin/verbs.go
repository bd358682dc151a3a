package kubectlplugin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// kinds are the resources the verbs take, by every name kubectl users
// type for them.
var kinds = map[string]func() client.Object{
	"natscluster": func() client.Object { return &v1alpha1.NatsCluster{} },
	"stream":      func() client.Object { return &v1alpha1.Stream{} },
	"consumer":    func() client.Object { return &v1alpha1.Consumer{} },
	"keyvalue":    func() client.Object { return &v1alpha1.KeyValue{} },
	"objectstore": func() client.Object { return &v1alpha1.ObjectStore{} },
}

// KindNames are the kinds the verbs take, for usage and completion.
var KindNames = []string{"natscluster", "stream", "consumer", "keyvalue", "objectstore"}

// objectOf is a new object of kind, which may be plural, short (nc, kv)
// or have a group ("streams.kubenats.io").
func objectOf(kind string) (client.Object, error) {
	k := strings.ToLower(kind)
	k, _, _ = strings.Cut(k, ".")
	switch k {
	case "nc", "natsclusters":
		k = "natscluster"
	case "kv", "keyvalues":
		k = "keyvalue"
	default:
		k = strings.TrimSuffix(k, "s")
	}
	newObj, ok := kinds[k]
	if !ok {
		return nil, fmt.Errorf("kubenats pauses %s, not %q", strings.Join(KindNames, ", "), kind)
	}
	return newObj(), nil
}

// SetPaused asks the operator to pause (or resume) one resource: the
// annotation kubenats.io/pause-reconciliation, set to "true" or removed
// by a merge patch of metadata alone, so that nothing else of the
// resource is written.
func SetPaused(ctx context.Context, c client.Client, kind, ns, name string, paused bool) error {
	obj, err := objectOf(kind)
	if err != nil {
		return err
	}
	var value any // null removes the key
	if paused {
		value = "true"
	}
	obj.SetNamespace(ns)
	obj.SetName(name)
	return annotate(ctx, c, obj, v1alpha1.AnnotationPauseReconciliation, value)
}

// annotate sets (or, for nil, removes) one annotation of obj by a merge
// patch of metadata alone, so that nothing else of the resource is
// written.
func annotate(ctx context.Context, c client.Client, obj client.Object, key string, value any) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: value}}})
	if err != nil {
		return err
	}
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
}

// RequestBalance asks the operator to spread the leaders of the
// NatsCluster ns/name now: the request annotation set to now.
func RequestBalance(ctx context.Context, c client.Client, ns, name string, now time.Time) error {
	obj := &v1alpha1.NatsCluster{}
	obj.SetNamespace(ns)
	obj.SetName(name)
	return annotate(ctx, c, obj, v1alpha1.AnnotationBalanceLeaders, now.UTC().Format(time.RFC3339Nano))
}

// RequestStepDown asks the operator to have the JetStream meta leader of
// the NatsCluster ns/name hand over, to server preferably ("" for any):
// the request annotation, made new by the time.
func RequestStepDown(ctx context.Context, c client.Client, ns, name, server string, now time.Time) error {
	return requestOf(ctx, c, ns, name, v1alpha1.AnnotationStepDown, server, now)
}

// RequestEvacuation asks the operator to move every replica off server.
func RequestEvacuation(ctx context.Context, c client.Client, ns, name, server string, now time.Time) error {
	return requestOf(ctx, c, ns, name, v1alpha1.AnnotationEvacuate, server, now)
}

// requestOf sets a request annotation to "<server>@<now>", after
// checking that the cluster exists (a typo then fails here, not in an
// event later).
func requestOf(ctx context.Context, c client.Client, ns, name, key, server string, now time.Time) error {
	obj := &v1alpha1.NatsCluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		return err
	}
	return annotate(ctx, c, obj, key, server+"@"+now.UTC().Format(time.RFC3339Nano))
}

// Promote makes the mirror Stream ns/name a stream of its own: spec.mirror
// removed, and subjects set when given, in one merge patch (the API
// server's validation allows removing a mirror, never adding one back).
func Promote(ctx context.Context, c client.Client, ns, name string, subjects []string) error {
	obj := &v1alpha1.Stream{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		return err
	}
	if obj.Spec.Mirror == nil {
		return fmt.Errorf("stream %s/%s mirrors nothing: there is nothing to promote", ns, name)
	}
	spec := map[string]any{"mirror": nil}
	if len(subjects) > 0 {
		spec["subjects"] = subjects
	}
	patch, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return err
	}
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
}
