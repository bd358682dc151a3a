package v1alpha1

import "testing"

// TestRouteTLSFacts: the route certificate's Secret is the one the spec
// names, else <name>-routes-tls, and the operator makes the route PKI
// only for the latter (a user's Secret is never overwritten). Careless
// variant caught: GeneratesRoutePKI without the secretName check (the
// "user's Secret" row fails: the operator would write into it).
func TestRouteTLSFacts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        *NatsCluster
		secret    string
		generates bool
	}{
		{"default", demo(nil), "demo-routes-tls", true},
		{"user's Secret", demo(func(c *NatsCluster) { c.Spec.TLS.Routes.SecretName = "mine" }), "mine", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.in.WithDefaults()
			if got := c.RouteTLSSecretName(); got != tc.secret {
				t.Errorf("RouteTLSSecretName() = %q, want %q", got, tc.secret)
			}
			if got := c.GeneratesRoutePKI(); got != tc.generates {
				t.Errorf("GeneratesRoutePKI() = %v, want %v", got, tc.generates)
			}
		})
	}
}
