package envtest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natscluster"
	"github.com/kubenats/kubenats/test/poll"
)

// allowedClusterIssuer is the one ClusterIssuer this suite's operator lets
// tenants name (--allowed-cluster-issuers, main_test.go).
const allowedClusterIssuer = "platform-ca"

// TestClusterIssuersOutsideTheAllowListAreRefused: a NatsCluster naming a
// ClusterIssuer the operator does not list, in any of its issuerRef
// fields, is refused, with the field in the message, before anything is
// applied (no StatefulSet, held over a window); the listed ClusterIssuer
// and any Issuer of the namespace go on to cert-manager (missing here:
// CertManagerMissing is how far they get). Careless variants caught
// (run): the check made after the apply (the apply asks cert-manager
// first and stops at its absence here, where with cert-manager installed
// the platform's CA would sign); by the "external" and "issuer" cases, a
// check on the name alone (another group's ClusterIssuer of the listed
// name let through, an Issuer sharing a refused name refused); and by the
// "leafnodes" and "gateway" cases the release before, whose check skipped
// those two fields: the leafnode cluster went on to CertManagerMissing
// (with cert-manager installed, the unlisted ClusterIssuer would have
// signed), the gateway one to its missing gateway Secret.
func TestClusterIssuersOutsideTheAllowListAreRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		ref    v1alpha1.IssuerRef
		field  string
		reason string
	}{
		{"client", v1alpha1.IssuerRef{Name: "someone-elses-ca", Kind: "ClusterIssuer"}, "spec.tls.client.issuerRef", natscluster.ReasonIssuerNotAllowed},
		{"leafnodes", v1alpha1.IssuerRef{Name: "someone-elses-ca", Kind: "ClusterIssuer"}, "spec.leafnodes.accept.tls.issuerRef", natscluster.ReasonIssuerNotAllowed},
		{"gateway", v1alpha1.IssuerRef{Name: "someone-elses-ca", Kind: "ClusterIssuer"}, "spec.gateway.tls.issuerRef", natscluster.ReasonIssuerNotAllowed},
		{"external", v1alpha1.IssuerRef{Name: allowedClusterIssuer, Kind: "ClusterIssuer", Group: "awspca.cert-manager.io"}, "spec.tls.client.issuerRef", natscluster.ReasonIssuerNotAllowed},
		{"listed", v1alpha1.IssuerRef{Name: allowedClusterIssuer, Kind: "ClusterIssuer"}, "spec.tls.client.issuerRef", v1alpha1.ReasonCertManagerMissing},
		{"issuer", v1alpha1.IssuerRef{Name: "someone-elses-ca", Kind: "Issuer"}, "spec.tls.client.issuerRef", v1alpha1.ReasonCertManagerMissing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			ref := tc.ref
			c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
				switch tc.field {
				case "spec.leafnodes.accept.tls.issuerRef":
					s.Leafnodes = &v1alpha1.LeafnodesSpec{Accept: &v1alpha1.LeafnodeAcceptSpec{TLS: &v1alpha1.ClientTLSSpec{IssuerRef: &ref}}}
				case "spec.gateway.tls.issuerRef":
					s.Gateway = &v1alpha1.GatewaySpec{SecretRef: v1alpha1.LocalSecretRef{Name: "gateway-auth"},
						TLS:      v1alpha1.GatewayTLSSpec{IssuerRef: &ref},
						Gateways: []v1alpha1.GatewayRemote{{Name: "west", URLs: []string{"tls://west.example:7222"}}}}
				default:
					s.TLS.Client = &v1alpha1.ClientTLSSpec{IssuerRef: &ref}
				}
			})
			create(t, c)
			readyCondition(t, c, metav1.ConditionFalse, tc.reason)
			if tc.reason != natscluster.ReasonIssuerNotAllowed {
				return
			}
			_, _, msg := readyMessage(t, c)
			if !strings.Contains(msg, tc.field) || !strings.Contains(msg, "--allowed-cluster-issuers") {
				t.Errorf("Ready's message %q names neither %s nor the flag", msg, tc.field)
			}
			poll.Holds(t, 3*time.Second, func() error {
				err := k8s.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: "nats"}, &appsv1.StatefulSet{})
				if !apierrors.IsNotFound(err) {
					return fmt.Errorf("the refused cluster's StatefulSet: %v (want not found)", err)
				}
				return nil
			})
		})
	}
}
