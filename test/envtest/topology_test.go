package envtest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/test/poll"
)

// TestTopologyValidation: what the API server refuses of spec.leafnodes
// and spec.gateway, each with the message a user reads; and what it
// accepts. Careless variant watched failing: the accept rule without
// 'jwt' (a jwt cluster accepting leafnodes refused).
func TestTopologyValidation(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	type spec = v1alpha1.NatsClusterSpec
	remote := func(edit func(*v1alpha1.LeafnodeRemote)) func(*spec) {
		return func(s *spec) {
			r := v1alpha1.LeafnodeRemote{Name: "hub", URLs: []string{"nats-leaf://hub.example:7422"}}
			edit(&r)
			s.Leafnodes = &v1alpha1.LeafnodesSpec{Remotes: []v1alpha1.LeafnodeRemote{r}}
		}
	}
	gateway := func(edit func(*v1alpha1.GatewaySpec)) func(*spec) {
		return func(s *spec) {
			g := v1alpha1.GatewaySpec{SecretRef: v1alpha1.LocalSecretRef{Name: "gw"}, TLS: v1alpha1.GatewayTLSSpec{SecretName: "gw-tls"},
				Gateways: []v1alpha1.GatewayRemote{{Name: "west", URLs: []string{"tls://west.example:7222"}}}}
			edit(&g)
			s.Gateway = &g
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*spec)
		want []string // empty: accepted
	}{
		{"leafnodes-empty", func(s *spec) { s.Leafnodes = &v1alpha1.LeafnodesSpec{} }, []string{"leafnodes: set accept, remotes or both"}},
		{"accept-token", func(s *spec) {
			s.Auth.Mode = v1alpha1.AuthToken
			s.Leafnodes = &v1alpha1.LeafnodesSpec{Accept: &v1alpha1.LeafnodeAcceptSpec{}}
		}, []string{"leafnodes.accept needs auth.mode users or jwt"}},
		{"accept-none", func(s *spec) {
			s.Auth.Mode = v1alpha1.AuthNone
			s.Leafnodes = &v1alpha1.LeafnodesSpec{Accept: &v1alpha1.LeafnodeAcceptSpec{}}
		}, []string{"leafnodes.accept needs auth.mode users or jwt"}},
		{"accept-tls-without-source", func(s *spec) {
			s.Leafnodes = &v1alpha1.LeafnodesSpec{Accept: &v1alpha1.LeafnodeAcceptSpec{TLS: &v1alpha1.ClientTLSSpec{Verify: true}}}
		}, []string{"leafnodes.accept.tls: set exactly one of secretName and issuerRef"}},
		{"accept-tls-allowing-plaintext", func(s *spec) {
			s.Leafnodes = &v1alpha1.LeafnodesSpec{Accept: &v1alpha1.LeafnodeAcceptSpec{TLS: &v1alpha1.ClientTLSSpec{SecretName: "t", AllowPlaintext: ptr.To(true)}}}
		}, []string{"allowPlaintext applies to the client port only"}},
		{"remote-url-with-credentials", remote(func(r *v1alpha1.LeafnodeRemote) { r.URLs = []string{"nats-leaf://u:p@hub:7422"} }),
			[]string{"spec.leafnodes.remotes[0].urls[0]", "should match"}},
		{"remote-url-scheme", remote(func(r *v1alpha1.LeafnodeRemote) { r.URLs = []string{"http://hub:7422"} }),
			[]string{"should match"}},
		{"remote-two-credentials", remote(func(r *v1alpha1.LeafnodeRemote) {
			r.CredsSecretRef, r.UserSecretRef = &v1alpha1.LocalSecretRef{Name: "a"}, &v1alpha1.LocalSecretRef{Name: "b"}
		}), []string{"a remote takes credsSecretRef or userSecretRef, not both"}},
		{"remote-tls-ws", remote(func(r *v1alpha1.LeafnodeRemote) {
			r.URLs, r.TLS = []string{"ws://hub:443"}, &v1alpha1.LocalSecretRef{Name: "ca"}
		}), []string{"a remote with tls cannot use ws:// URLs"}},
		{"gateway-urls-and-ref", gateway(func(g *v1alpha1.GatewaySpec) {
			g.Gateways[0].ClusterRef = &v1alpha1.GatewayClusterRef{Name: "west"}
		}), []string{"a gateway needs exactly one of urls and clusterRef"}},
		{"gateway-tls-both", gateway(func(g *v1alpha1.GatewaySpec) { g.TLS.IssuerRef = &v1alpha1.IssuerRef{Name: "ca"} }),
			[]string{"gateway TLS: set exactly one of secretName and issuerRef"}},
		{"gateway-url-credentials", gateway(func(g *v1alpha1.GatewaySpec) { g.Gateways[0].URLs = []string{"nats://u:p@west:7222"} }),
			[]string{"should match"}},
		{"gateway-single-server-jetstream", func(s *spec) {
			s.Replicas = ptr.To[int32](1)
			gateway(func(*v1alpha1.GatewaySpec) {})(s)
		}, []string{"a gateway with JetStream needs 3 or more replicas"}},

		{"accepted-accept-jwt", func(s *spec) {
			s.Auth.Mode = v1alpha1.AuthJWT
			s.Leafnodes = &v1alpha1.LeafnodesSpec{Accept: &v1alpha1.LeafnodeAcceptSpec{}}
		}, nil},
		{"accepted-remote", remote(func(r *v1alpha1.LeafnodeRemote) { r.UserSecretRef = &v1alpha1.LocalSecretRef{Name: "hub-user"} }), nil},
		{"accepted-gateway-single-server-without-jetstream", func(s *spec) {
			s.Replicas, s.JetStream.Enabled = ptr.To[int32](1), ptr.To(false)
			gateway(func(*v1alpha1.GatewaySpec) {})(s)
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := natsCluster(ns, tc.name, tc.edit)
			err := k8s.Create(ctx(t), c)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			assertInvalid(t, err, tc.want...)
		})
	}
}

// TestTopologySecretsMustBeOptedIn: a remote naming a Secret its owner did
// not label for kubenats stops the cluster with a condition that names
// the field (and no pod mounts or reads it); labelled, it is used, and
// nothing of it shows in the ConfigMap, the status or an event.
// Careless variant watched failing: reading the remote's Secret straight
// from the API server, without the opt-in check (the unlabelled Secret
// is used: Ready goes on to Progressing, never SecretNotFound).
func TestTopologySecretsMustBeOptedIn(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hub-user"},
		StringData: map[string]string{"user": "edge", "password": "hubPassw0rdSecret"}}
	create(t, secret)
	c := natsCluster(ns, "edge", func(s *v1alpha1.NatsClusterSpec) {
		s.Replicas, s.JetStream.Enabled = ptr.To[int32](1), ptr.To(false)
		s.Leafnodes = &v1alpha1.LeafnodesSpec{Remotes: []v1alpha1.LeafnodeRemote{{
			Name: "hub", URLs: []string{"nats-leaf://hub.example:7422"}, UserSecretRef: &v1alpha1.LocalSecretRef{Name: "hub-user"},
		}}}
	})
	create(t, c)
	readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonSecretNotFound)
	if _, _, msg := readyMessage(t, c); !strings.Contains(msg, "spec.leafnodes.remotes[hub].userSecretRef") {
		t.Errorf("the condition does not name the field: %q", msg)
	}
	update(t, secret, func(s *corev1.Secret) { s.Labels = optedIn })
	readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonProgressing)
	leaf := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge-leafnodes"}}
	get(t, leaf)
	if !strings.Contains(string(leaf.Data["leafnodes.conf"]), "hubPassw0rdSecret") {
		t.Errorf("leafnodes.conf lacks the remote's URL with its password")
	}
	var cms corev1.ConfigMapList
	if err := k8s.List(ctx(t), &cms); err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		for _, v := range cm.Data {
			if strings.Contains(v, "hubPassw0rdSecret") {
				t.Errorf("ConfigMap %s/%s holds the remote's password", cm.Namespace, cm.Name)
			}
		}
	}
	get(t, c)
	for _, cond := range c.Status.Conditions {
		if strings.Contains(cond.Message, "hubPassw0rdSecret") {
			t.Errorf("condition %s holds the password", cond.Type)
		}
	}
}

// TestAMismatchedKeyIsNeverMounted: the gateway's and the leafnode
// listener's certificate Secret (the tenant's own, opted in) holds a
// tls.key that is not the key of its tls.crt (the certificate of one
// pair, the key of another, from the same CA). Nothing is applied: no
// StatefulSet, Ready CertificateInvalid naming the listener and the key,
// held over a window. With the right key the cluster goes on. Careless
// variant caught (run): fillCertificate without the key check (the
// release before): both clusters went on to Progressing, their
// StatefulSet applied with the pair mounted, which nats-server refuses
// at its start.
func TestAMismatchedKeyIsNeverMounted(t *testing.T) {
	t.Parallel()
	for _, listener := range []string{"gateway", "leafnodes"} {
		t.Run(listener, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			now := time.Now()
			ca := mustKeyPair(t)(pki.NewCA("tenant CA", now, time.Hour))
			names := []string{"*.nats-headless." + ns + ".svc"}
			served := mustKeyPair(t)(pki.Issue(ca, names, now, time.Hour))
			other := mustKeyPair(t)(pki.Issue(ca, names, now, time.Hour))
			tlsSecret := userSecret(ns, "own-tls", corev1.SecretTypeTLS, optedIn,
				map[string]string{"tls.crt": served.Cert, "tls.key": other.Key, "ca.crt": ca.Cert})
			create(t, tlsSecret)
			create(t, userSecret(ns, "gw", corev1.SecretTypeOpaque, optedIn, map[string]string{"user": "gw", "password": "gatewayPassw0rd"}))
			c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
				if listener == "gateway" {
					s.Gateway = &v1alpha1.GatewaySpec{SecretRef: v1alpha1.LocalSecretRef{Name: "gw"}, TLS: v1alpha1.GatewayTLSSpec{SecretName: "own-tls"},
						Gateways: []v1alpha1.GatewayRemote{{Name: "west", URLs: []string{"tls://west.example:7222"}}}}
					return
				}
				s.Leafnodes = &v1alpha1.LeafnodesSpec{Accept: &v1alpha1.LeafnodeAcceptSpec{TLS: &v1alpha1.ClientTLSSpec{SecretName: "own-tls"}}}
			})
			create(t, c)
			readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonCertificateInvalid)
			if _, _, msg := readyMessage(t, c); !strings.Contains(msg, "the "+listener+" certificate") || !strings.Contains(msg, "tls.key") {
				t.Errorf("Ready's message %q names neither the %s certificate nor tls.key", msg, listener)
			}
			poll.Holds(t, 3*time.Second, func() error {
				err := k8s.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: "nats"}, &appsv1.StatefulSet{})
				if !apierrors.IsNotFound(err) {
					return fmt.Errorf("the StatefulSet of a cluster whose %s key does not match: %v (want not found)", listener, err)
				}
				return nil
			})
			update(t, tlsSecret, func(s *corev1.Secret) { s.Data["tls.key"] = []byte(served.Key) })
			get(t, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}})
		})
	}
}

func mustKeyPair(t *testing.T) func(pki.KeyPair, error) pki.KeyPair {
	return func(kp pki.KeyPair, err error) pki.KeyPair {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return kp
	}
}
