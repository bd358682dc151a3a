package natscluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestUsedBy: a generated Secret counts as deleted under running servers
// only when they run with its value; one they never read is made.
func TestUsedBy(t *testing.T) {
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	env := func(secret string) corev1.Container {
		return corev1.Container{Env: []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: secret}}}}}}
	}
	users := corev1.Volume{VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
		{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "n-users"}}}}}}}
	routeTLS := corev1.Volume{VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "n-routes-tls"}}}
	for _, tc := range []struct {
		name   string
		spec   corev1.PodSpec
		secret string
		want   bool
	}{
		{"route password read from the environment", corev1.PodSpec{Containers: []corev1.Container{env("n-routes")}}, "n-routes", true},
		{"one server never had route credentials", corev1.PodSpec{Containers: []corev1.Container{{}}}, "n-routes", false},
		{"system password through users.conf", corev1.PodSpec{Volumes: []corev1.Volume{users}}, "n-system", true},
		{"client password through users.conf", corev1.PodSpec{Volumes: []corev1.Volume{users}}, "n-auth", true},
		{"token from the environment", corev1.PodSpec{Containers: []corev1.Container{env("n-auth")}}, "n-auth", true},
		{"mode none had no system user", corev1.PodSpec{Containers: []corev1.Container{env("n-routes")}}, "n-system", false},
		{"the CA signed the mounted route certificate", corev1.PodSpec{Volumes: []corev1.Volume{routeTLS}}, "n-ca", true},
		{"route TLS was off: no CA in use", corev1.PodSpec{Containers: []corev1.Container{env("n-routes")}}, "n-ca", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := usedBy(c, readSecrets(&tc.spec), tc.secret); got != tc.want {
				t.Errorf("usedBy(%s) = %v, want %v", tc.secret, got, tc.want)
			}
		})
	}
}
