package v1alpha1

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// demo is a NatsCluster named demo with what set changes.
func demo(set func(*NatsCluster)) *NatsCluster {
	c := &NatsCluster{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "ns"}}
	if set != nil {
		set(c)
	}
	return c
}

// TestClientSecretRef: the client password (mode users) or token (mode
// token) is read from the user's Secret when the spec names one, else from
// <name>-auth under the mode's key; modes none and jwt have none. Careless
// variant caught: TokenKey swapped for PasswordKey in mode token (the
// token row fails).
func TestClientSecretRef(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     *NatsCluster
		want   string
		wantOK bool
	}{
		{"users", demo(nil), "{demo-auth password}", true},
		{"token", demo(func(c *NatsCluster) { c.Spec.Auth.Mode = AuthToken }), "{demo-auth token}", true},
		{"user's Secret", demo(func(c *NatsCluster) { c.Spec.Auth.SecretRef = &SecretKeyRef{Name: "mine", Key: "pw"} }), "{mine pw}", true},
		{"none", demo(func(c *NatsCluster) { c.Spec.Auth.Mode = AuthNone }), "{ }", false},
		{"jwt", demo(func(c *NatsCluster) { c.Spec.Auth.Mode = AuthJWT }), "{ }", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, ok := tc.in.WithDefaults().ClientSecretRef()
			if ok != tc.wantOK || fmt.Sprint(ref) != tc.want {
				t.Errorf("ClientSecretRef() = %v, %v; want %s, %v", ref, ok, tc.want, tc.wantOK)
			}
		})
	}
}
