package render_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// cluster is a NatsCluster named demo in namespace ns, as a user would write
// it (nothing defaulted), changed by opts in order.
func cluster(opts ...func(*v1alpha1.NatsCluster)) *v1alpha1.NatsCluster {
	c := &v1alpha1.NatsCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "NatsCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "ns"},
	}
	for _, opt := range opts {
		opt(c)
	}
	return c
}

// Options for cluster. Each sets one spec field.

func named(name string) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Name = name }
}

func withReplicas(n int32) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.Replicas = ptr.To(n) }
}

func withJetStream(on bool) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.JetStream.Enabled = ptr.To(on) }
}

func withFileStoreSize(size string) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) {
		c.Spec.JetStream.FileStore.Size = ptr.To(resource.MustParse(size))
	}
}

func withStorageClass(name string) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.JetStream.FileStore.StorageClassName = ptr.To(name) }
}

func withPVCRetention(p v1alpha1.PVCRetentionPolicy) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.JetStream.FileStore.PVCRetentionPolicy = p }
}

func withMemoryStore(size string) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) {
		c.Spec.JetStream.MemoryStore = &v1alpha1.MemoryStoreSpec{Size: resource.MustParse(size)}
	}
}

func withDomain(domain string) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.JetStream.Domain = domain }
}

func withAuthMode(mode v1alpha1.AuthMode) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.Auth.Mode = mode }
}

func withAuthUser(user string) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.Auth.User = user }
}

// withAuthSecret sets auth.secretRef; an empty key is left for defaulting.
func withAuthSecret(name, key string) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) {
		c.Spec.Auth.SecretRef = &v1alpha1.SecretKeyRef{Name: name, Key: key}
	}
}

// withConfig sets one passthrough key to raw JSON.
func withConfig(key, rawJSON string) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) {
		if c.Spec.Config == nil {
			c.Spec.Config = map[string]apiextensionsv1.JSON{}
		}
		c.Spec.Config[key] = apiextensionsv1.JSON{Raw: []byte(rawJSON)}
	}
}

func withResources(r corev1.ResourceRequirements) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.Resources = &r }
}

func withVersion(v string) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.Version = v }
}

func withImage(image string) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.Image = image }
}

func withService(s v1alpha1.ServiceSpec) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.Service = s }
}

func withPodTemplate(p v1alpha1.PodTemplateSpec) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.PodTemplate = p }
}

// renderObjects is render.Objects that fails the test on an error.
func renderObjects(t *testing.T, c *v1alpha1.NatsCluster, in render.Inputs) []client.Object {
	t.Helper()
	objs, err := render.Objects(c, in)
	if err != nil {
		t.Fatalf("Objects: %v", err)
	}
	return objs
}

// find returns the one object of type T named name in objs.
func find[T client.Object](t *testing.T, objs []client.Object, name string) T {
	t.Helper()
	var found []T
	for _, o := range objs {
		if typed, ok := o.(T); ok && o.GetName() == name {
			found = append(found, typed)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("found %d objects of type %T named %q, want 1", len(found), zero, name)
	}
	return found[0]
}

// count returns how many objects of type T objs holds.
func count[T client.Object](objs []client.Object) int {
	n := 0
	for _, o := range objs {
		if _, ok := o.(T); ok {
			n++
		}
	}
	return n
}

// statefulSetOf renders c with in and returns its StatefulSet.
func statefulSetOf(t *testing.T, c *v1alpha1.NatsCluster, in render.Inputs) *appsv1.StatefulSet {
	t.Helper()
	return find[*appsv1.StatefulSet](t, renderObjects(t, c, in), c.Name)
}

// configText renders c and returns the nats.conf in its ConfigMap.
func configText(t *testing.T, c *v1alpha1.NatsCluster) string {
	t.Helper()
	cm := find[*corev1.ConfigMap](t, renderObjects(t, c, render.Inputs{}), c.Name+"-config")
	text, ok := cm.Data[render.ConfigKey]
	if !ok {
		t.Fatalf("ConfigMap %s has no %s key", cm.Name, render.ConfigKey)
	}
	return text
}

// configHash renders c and returns the pod template's config-hash annotation.
func configHash(t *testing.T, c *v1alpha1.NatsCluster) string {
	t.Helper()
	sts := statefulSetOf(t, c, render.Inputs{})
	hash, ok := sts.Spec.Template.Annotations[render.AnnotationConfigHash]
	if !ok || hash == "" {
		t.Fatalf("pod template has no %s annotation", render.AnnotationConfigHash)
	}
	return hash
}

// containerNamed returns the container called name in spec.
func containerNamed(t *testing.T, spec corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	for _, ctr := range spec.Containers {
		if ctr.Name == name {
			return ctr
		}
	}
	t.Fatalf("pod has no container %q", name)
	return corev1.Container{}
}

// serverContainerOf renders c and returns its nats container.
func serverContainerOf(t *testing.T, c *v1alpha1.NatsCluster) corev1.Container {
	t.Helper()
	return containerNamed(t, statefulSetOf(t, c, render.Inputs{}).Spec.Template.Spec, render.ServerContainerName)
}

// allContainers lists the init and regular containers of spec.
func allContainers(spec corev1.PodSpec) []corev1.Container {
	return append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
}

// secretRef is one key of one Secret.
type secretRef struct{ name, key string }

// secretEnv maps the env vars of ctr that read a Secret to the key they read.
func secretEnv(ctr corev1.Container) map[string]secretRef {
	out := map[string]secretRef{}
	for _, e := range ctr.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			out[e.Name] = secretRef{e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key}
		}
	}
	return out
}

// envVar returns the env var called name in ctr.
func envVar(ctr corev1.Container, name string) (corev1.EnvVar, bool) {
	for _, e := range ctr.Env {
		if e.Name == name {
			return e, true
		}
	}
	return corev1.EnvVar{}, false
}

func withClientTLS(secret string) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.TLS.Client = &v1alpha1.ClientTLSSpec{SecretName: secret} }
}

func withPlaintextClients() func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) {
		c.Spec.TLS.Client = &v1alpha1.ClientTLSSpec{AllowPlaintext: ptr.To(true)}
	}
}

func withClientIssuer(name string) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) {
		c.Spec.TLS.Client = &v1alpha1.ClientTLSSpec{IssuerRef: &v1alpha1.IssuerRef{Name: name}}
	}
}

func withRouteTLS(on bool) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.TLS.Routes.Enabled = &on }
}

func withRouteIssuer(name string) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) {
		c.Spec.TLS.Routes.IssuerRef = &v1alpha1.IssuerRef{Name: name, Kind: "ClusterIssuer"}
	}
}

func withMonitorTLS() func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.TLS.Monitor = &v1alpha1.MonitorTLSSpec{} }
}
