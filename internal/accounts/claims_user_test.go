package accounts

import (
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestUserClaims: each field of a NatsUser reaches its JWT. The issuer
// account is always the account's identity: the careless variant that
// leaves it out (a user signed by the account's identity key, or by the
// operator key) fails the first case.
func TestUserClaims(t *testing.T) {
	expires := metav1.NewTime(time.Unix(1900000000, 0))
	for _, tc := range []struct {
		name  string
		spec  v1alpha1.NatsUserSpec
		check func(*testing.T, *jwt.UserClaims)
	}{
		{"issuer account and name", v1alpha1.NatsUserSpec{Account: "orders"}, func(t *testing.T, c *jwt.UserClaims) {
			if c.IssuerAccount != pubA || c.Name != "team-a/app" || c.Subject != "UAPP" {
				t.Errorf("issuer account %q name %q subject %q", c.IssuerAccount, c.Name, c.Subject)
			}
			if len(c.Pub.Allow) != 0 || len(c.Sub.Deny) != 0 || c.Resp != nil || c.Expires != 0 {
				t.Errorf("unset permissions written: %+v", c.Permissions)
			}
		}},
		{"publish and subscribe allow and deny", v1alpha1.NatsUserSpec{Permissions: &v1alpha1.UserPermissions{
			Publish:   &v1alpha1.SubjectPermission{Allow: []v1alpha1.Subject{"orders.>"}, Deny: []v1alpha1.Subject{"orders.admin"}},
			Subscribe: &v1alpha1.SubjectPermission{Allow: []v1alpha1.Subject{"_INBOX.>", "orders.*"}},
		}}, func(t *testing.T, c *jwt.UserClaims) {
			if !c.Pub.Allow.Contains("orders.>") || !c.Pub.Deny.Contains("orders.admin") ||
				!c.Sub.Allow.Contains("_INBOX.>") || !c.Sub.Allow.Contains("orders.*") || len(c.Sub.Deny) != 0 {
				t.Errorf("permissions = %+v", c.Permissions)
			}
		}},
		{"responses", v1alpha1.NatsUserSpec{Permissions: &v1alpha1.UserPermissions{
			AllowResponses: &v1alpha1.ResponsePermission{MaxMsgs: 3, Expires: "2s"}}}, func(t *testing.T, c *jwt.UserClaims) {
			if c.Resp == nil || c.Resp.MaxMsgs != 3 || c.Resp.Expires != 2*time.Second {
				t.Errorf("responses = %+v", c.Resp)
			}
		}},
		{"connection types and expiry", v1alpha1.NatsUserSpec{ConnectionTypes: []v1alpha1.ConnectionType{"STANDARD", "WEBSOCKET"}, ExpiresAt: &expires},
			func(t *testing.T, c *jwt.UserClaims) {
				if !c.AllowedConnectionTypes.Contains("STANDARD") || !c.AllowedConnectionTypes.Contains("WEBSOCKET") || len(c.AllowedConnectionTypes) != 2 {
					t.Errorf("connection types = %v", c.AllowedConnectionTypes)
				}
				if c.Expires != 1900000000 {
					t.Errorf("expires = %d", c.Expires)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := UserClaims(User{Name: "team-a/app", Spec: tc.spec, PublicKey: "UAPP", Account: pubA})
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}
