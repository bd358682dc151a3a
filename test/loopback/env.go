package loopback

import (
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
)

// objects is what a pod reads from the API: Secrets and ConfigMaps of its
// namespace, through the kubelet's informer caches.
type objects interface {
	secret(ns, name string) (*corev1.Secret, error)
	configMap(ns, name string) (*corev1.ConfigMap, error)
}

// envVars is a container's environment in definition order; a later
// definition of a name replaces the value and keeps the place.
type envVars struct {
	names  []string
	values map[string]string
}

func (e *envVars) set(name, value string) {
	if e.values == nil {
		e.values = map[string]string{}
	}
	if _, ok := e.values[name]; !ok {
		e.names = append(e.names, name)
	}
	e.values[name] = value
}

func (e *envVars) lookup(name string) (string, bool) {
	v, ok := e.values[name]
	return v, ok
}

// list is the environment as exec wants it.
func (e *envVars) list() []string {
	out := make([]string, len(e.names))
	for i, n := range e.names {
		out[i] = n + "=" + e.values[n]
	}
	return out
}

// containerEnv resolves c's environment as the kubelet does: envFrom first,
// then env in order, each literal value expanded against the variables
// defined before it. A missing Secret or ConfigMap (or key) that is not
// optional is an error, which the kubelet reports as
// CreateContainerConfigError.
func containerEnv(pod *corev1.Pod, c *corev1.Container, objs objects) (*envVars, error) {
	env := &envVars{}
	env.set("HOSTNAME", podHostname(pod))
	for _, from := range c.EnvFrom {
		if err := envFrom(pod.Namespace, from, objs, env); err != nil {
			return nil, err
		}
	}
	for _, v := range c.Env {
		if v.ValueFrom == nil {
			env.set(v.Name, expand(v.Value, env.lookup))
			continue
		}
		value, ok, err := envSource(pod, c, v.ValueFrom, objs)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", v.Name, err)
		}
		if ok {
			env.set(v.Name, value)
		}
	}
	return env, nil
}

func podHostname(pod *corev1.Pod) string {
	if pod.Spec.Hostname != "" {
		return pod.Spec.Hostname
	}
	return pod.Name
}

func envFrom(ns string, from corev1.EnvFromSource, objs objects, env *envVars) error {
	var data map[string]string
	switch {
	case from.ConfigMapRef != nil:
		cm, err := objs.configMap(ns, from.ConfigMapRef.Name)
		if err != nil {
			return optional(err, from.ConfigMapRef.Optional)
		}
		data = cm.Data
	case from.SecretRef != nil:
		s, err := objs.secret(ns, from.SecretRef.Name)
		if err != nil {
			return optional(err, from.SecretRef.Optional)
		}
		data = map[string]string{}
		for k, v := range s.Data {
			data[k] = string(v)
		}
	}
	for k, v := range data {
		env.set(from.Prefix+k, v)
	}
	return nil
}

// optional forgives a missing object when the reference says so.
func optional(err error, opt *bool) error {
	if apierrors.IsNotFound(err) && opt != nil && *opt {
		return nil
	}
	return err
}

// envSource resolves one valueFrom; ok is false for a missing optional key.
func envSource(pod *corev1.Pod, c *corev1.Container, src *corev1.EnvVarSource, objs objects) (string, bool, error) {
	switch {
	case src.FieldRef != nil:
		v, err := podField(pod, src.FieldRef.FieldPath)
		return v, err == nil, err
	case src.ResourceFieldRef != nil:
		v, err := resourceField(c, src.ResourceFieldRef)
		return v, err == nil, err
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		s, err := objs.secret(pod.Namespace, ref.Name)
		if err != nil {
			return "", false, optional(err, ref.Optional)
		}
		v, ok := s.Data[ref.Key]
		if !ok && (ref.Optional == nil || !*ref.Optional) {
			return "", false, fmt.Errorf("key %q not in Secret %s", ref.Key, ref.Name)
		}
		return string(v), ok, nil
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		cm, err := objs.configMap(pod.Namespace, ref.Name)
		if err != nil {
			return "", false, optional(err, ref.Optional)
		}
		v, ok := cm.Data[ref.Key]
		if !ok && (ref.Optional == nil || !*ref.Optional) {
			return "", false, fmt.Errorf("key %q not in ConfigMap %s", ref.Key, ref.Name)
		}
		return v, ok, nil
	}
	return "", false, fmt.Errorf("unsupported valueFrom")
}

// podField is the downward API's value of a field path.
func podField(pod *corev1.Pod, path string) (string, error) {
	if key, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs":
		return pod.Status.PodIP, nil
	case "status.hostIP", "status.hostIPs":
		return pod.Status.HostIP, nil
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

// subscript reads the key of "prefix['key']".
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok || !strings.HasSuffix(rest, "']") {
		return "", false
	}
	return strings.TrimSuffix(rest, "']"), true
}

// resourceField is a container's request or limit divided by the divisor,
// rounded up, as the downward API gives it.
func resourceField(c *corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	var q resource.Quantity
	switch ref.Resource {
	case "limits.cpu":
		q = c.Resources.Limits[corev1.ResourceCPU]
	case "limits.memory":
		q = c.Resources.Limits[corev1.ResourceMemory]
	case "requests.cpu":
		q = c.Resources.Requests[corev1.ResourceCPU]
	case "requests.memory":
		q = c.Resources.Requests[corev1.ResourceMemory]
	default:
		return "", fmt.Errorf("unsupported resourceFieldRef %q", ref.Resource)
	}
	if q.IsZero() {
		// The kubelet falls back to the node's allocatable; this node has
		// no real size, so say so instead of inventing one.
		return "", fmt.Errorf("resourceFieldRef %q of a container without that value", ref.Resource)
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	return fmt.Sprint(int64(math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue())))), nil
}
