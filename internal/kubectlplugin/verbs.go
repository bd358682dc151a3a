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
