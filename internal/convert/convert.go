package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// NACKGroupVersion is the NACK API the conversion reads.
const NACKGroupVersion = "jetstream.nats.io/v1beta2"

// Options are what NACK took from its own flags.
type Options struct {
	// Cluster is the NatsCluster that resources naming neither servers nor
	// an account live in (NACK's --servers default); or Servers.
	Cluster *v1alpha1.ClusterRef
	// Servers are the NATS URLs for those resources, when not Cluster.
	Servers []string
	// Namespace is given to resources that name none, as kubectl would;
	// "" leaves them without one.
	Namespace string
}

// Result is what a conversion made of its input.
type Result struct {
	// Objects are kubenats resources, in input order.
	Objects []client.Object
	// Lost are the NACK settings not carried.
	Lost []Loss
	// Secrets are the Secrets (namespace/name) the resources now read,
	// which their owners must label kubenats.io/allow=true.
	Secrets []string
}

// nackObject is a NACK resource as written: its spec stays untyped, so
// that each field meets its rule, and none passes unseen.
type nackObject struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       map[string]any    `json:"spec"`
}

func (o nackObject) id() string {
	return o.Kind + " " + o.Metadata.Namespace + "/" + o.Metadata.Name
}

// Convert converts the NACK documents docs. An Account becomes the
// connection of the resources naming it, so Accounts are read first,
// wherever they stand. An error is input that cannot be converted at all
// (not YAML, not NACK's, no target); a setting that cannot be carried is a
// Loss, and the rest of its resource is converted.
func Convert(docs [][]byte, o Options) (Result, error) {
	var objs []nackObject
	for i, doc := range docs {
		var obj nackObject
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return Result{}, fmt.Errorf("document %d: %w", i+1, err)
		}
		if obj.APIVersion != NACKGroupVersion {
			return Result{}, fmt.Errorf("document %d: %s %q is not a NACK %s resource", i+1, obj.Kind, obj.APIVersion, NACKGroupVersion)
		}
		if obj.Metadata.Namespace == "" {
			obj.Metadata.Namespace = o.Namespace
		}
		objs = append(objs, obj)
	}
	var res Result
	accounts := map[string]v1alpha1.Connection{}
	for _, obj := range objs {
		if obj.Kind == "Account" {
			conn, lost, secrets := accountConnection(obj)
			accounts[obj.Metadata.Namespace+"/"+obj.Metadata.Name] = conn
			res.Lost = append(res.Lost, lost...)
			res.Secrets = append(res.Secrets, secrets...)
		}
	}
	for _, obj := range objs {
		if obj.Kind == "Account" {
			continue
		}
		out, lost, err := convertObject(obj, accounts, o)
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", obj.id(), err)
		}
		res.Objects = append(res.Objects, out)
		res.Lost = append(res.Lost, lost...)
	}
	slices.Sort(res.Secrets)
	res.Secrets = slices.Compact(res.Secrets)
	return res, nil
}

func convertObject(obj nackObject, accounts map[string]v1alpha1.Connection, o Options) (client.Object, []Loss, error) {
	var (
		rules map[string]rule
		out   client.Object
		spec  any
	)
	switch obj.Kind {
	case "Stream":
		s := &v1alpha1.Stream{}
		rules, out, spec = streamRules, s, &s.Spec
	case "Consumer":
		c := &v1alpha1.Consumer{}
		rules, out, spec = consumerRules, c, &c.Spec
	case "KeyValue":
		kv := &v1alpha1.KeyValue{}
		rules, out, spec = keyValueRules, kv, &kv.Spec
	case "ObjectStore":
		os := &v1alpha1.ObjectStore{}
		rules, out, spec = objectStoreRules, os, &os.Spec
	default:
		return nil, nil, fmt.Errorf("NACK has no kind %q that kubenats converts", obj.Kind)
	}
	var lost []Loss
	fields := carry(obj.id(), "spec", obj.Spec, rules, &lost)
	if obj.Kind == "Consumer" {
		consumerName(obj, fields, &lost)
	}
	target, targetLost, err := targetOf(obj, accounts, o)
	if err != nil {
		return nil, nil, err
	}
	lost = append(lost, targetLost...)
	// Target and Lifecycle are inline in every kind's spec.
	if target.Cluster != nil {
		fields["cluster"] = target.Cluster
	} else {
		fields["connection"] = target.Connection
	}
	// What NACK made exists on the servers, without kubenats' marks: the
	// converted resource takes it over instead of refusing it.
	fields["adoptExisting"] = true
	if err := decodeStrict(fields, spec); err != nil {
		return nil, nil, err
	}
	out.GetObjectKind().SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(obj.Kind))
	out.SetName(obj.Metadata.Name)
	out.SetNamespace(obj.Metadata.Namespace)
	out.SetLabels(obj.Metadata.Labels)
	out.SetAnnotations(carriedAnnotations(obj.Metadata.Annotations))
	return out, lost, nil
}

// carry copies the fields of in that their rules carry, under their
// kubenats names, and records the others.
func carry(id, path string, in map[string]any, rules map[string]rule, lost *[]Loss) map[string]any {
	out := map[string]any{}
	for _, k := range sortedKeys(in) {
		v, field := in[k], path+"."+k
		r, known := rules[k]
		switch {
		case !known:
			*lost = append(*lost, Loss{id, field, "not a NACK " + NACKGroupVersion + " field kubenats knows"})
		case r.lost != "":
			*lost = append(*lost, Loss{id, field, r.lost})
		case r.target:
		case r.nested != nil && r.nestedL:
			list, ok := v.([]any)
			if !ok {
				*lost = append(*lost, Loss{id, field, "not a list"})
				continue
			}
			items := make([]any, 0, len(list))
			for i, item := range list {
				m, ok := item.(map[string]any)
				if !ok {
					*lost = append(*lost, Loss{id, fmt.Sprintf("%s[%d]", field, i), "not an object"})
					continue
				}
				items = append(items, carry(id, fmt.Sprintf("%s[%d]", field, i), m, r.nested, lost))
			}
			out[r.to] = items
		case r.nested != nil:
			m, ok := v.(map[string]any)
			if !ok {
				if v != nil {
					*lost = append(*lost, Loss{id, field, "not an object"})
				}
				continue
			}
			out[r.to] = carry(id, field, m, r.nested, lost)
		default:
			out[r.to] = v
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// consumerName reconciles NACK's two names of a consumer into kubenats'
// one, durableName: nats-server makes them agree, or refuses the consumer.
func consumerName(obj nackObject, fields map[string]any, lost *[]Loss) {
	name, _ := obj.Spec["name"].(string)
	durable, _ := fields["durableName"].(string)
	switch {
	case name == "" || name == durable:
	case durable == "":
		fields["durableName"] = name
	default:
		*lost = append(*lost, Loss{obj.id(), "spec.name", fmt.Sprintf(
			"differs from durableName %q, which nats-server requires it to equal; kubenats keeps durableName", durable)})
	}
}

// decodeStrict decodes fields into spec, refusing what the kubenats type
// does not hold (a field it lacks, a value of the wrong type).
func decodeStrict(fields map[string]any, spec any) error {
	data, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(spec); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	return nil
}

// carriedAnnotations are the user's annotations, without kubectl's record
// of the NACK object it applied.
func carriedAnnotations(in map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		if k != "kubectl.kubernetes.io/last-applied-configuration" {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
