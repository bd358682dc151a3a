package loopback

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// fakeObjects serves Secrets and ConfigMaps from maps.
type fakeObjects struct {
	secrets    map[string]*corev1.Secret
	configMaps map[string]*corev1.ConfigMap
}

func (f fakeObjects) secret(_, name string) (*corev1.Secret, error) {
	if s, ok := f.secrets[name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func (f fakeObjects) configMap(_, name string) (*corev1.ConfigMap, error) {
	if c, ok := f.configMaps[name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

// TestContainerEnvOfTheOperatorsPod resolves the environment the way the
// kubelet would for the operator's nats container: the pod name through
// the downward API, $(POD_NAME) expanded in the quoted server name, the
// credentials from their Secrets.
func TestContainerEnvOfTheOperatorsPod(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "nats-1", Namespace: "demo"}}
	c := &corev1.Container{Env: []corev1.EnvVar{
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "SERVER_NAME", Value: `"$(POD_NAME)"`},
		{Name: "NATS_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "nats-auth"}, Key: "password"}}},
		{Name: "OPTIONAL", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "missing"}, Key: "x", Optional: ptr.To(true)}}},
		{Name: "LATER", Value: "$(NATS_PASSWORD)-$(UNDEFINED)"},
	}}
	objs := fakeObjects{secrets: map[string]*corev1.Secret{"nats-auth": {Data: map[string][]byte{"password": []byte("s3cret")}}}}
	env, err := containerEnv(pod, c, objs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"HOSTNAME=nats-1", "POD_NAME=nats-1", `SERVER_NAME="nats-1"`, "NATS_PASSWORD=s3cret", "LATER=s3cret-$(UNDEFINED)"}
	if got := env.list(); !slices.Equal(got, want) {
		t.Errorf("env = %q, want %q", got, want)
	}

	c.Env[2].ValueFrom.SecretKeyRef.Name = "not-there"
	if _, err := containerEnv(pod, c, objs); err == nil {
		t.Error("a missing Secret that is not optional resolved, want an error")
	}
}
