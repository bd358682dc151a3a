package envtest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
)

// tlsSecretEdits name a tenant's TLS Secret, by listener, in each place a
// NatsCluster can: spec.tls.client.secretName, spec.tls.routes.secretName.
var tlsSecretEdits = map[string]func(name string) func(*v1alpha1.NatsClusterSpec){
	"client": func(name string) func(*v1alpha1.NatsClusterSpec) {
		return func(s *v1alpha1.NatsClusterSpec) { s.TLS.Client = &v1alpha1.ClientTLSSpec{SecretName: name} }
	},
	"routes": func(name string) func(*v1alpha1.NatsClusterSpec) {
		return func(s *v1alpha1.NatsClusterSpec) { s.TLS.Routes.SecretName = name }
	},
}

// TestRefusedTLSSecretIsNeverMounted names, as a certificate Secret,
// Secrets kubenats may not use (another tenant's key, unlabelled; one that
// does not exist). The refusal must stop the apply, as a refused
// spec.auth.secretRef does: the pods run spec.image, so a Secret in their
// volumes is readable by whoever chose the image. The test looks at the
// StatefulSet, not only the status: a new cluster gets none, a running one
// keeps the StatefulSet it had, with no volume naming the Secret.
//
// Careless variant caught (today's main before this test): the refusal
// reached CertificatesReady and Ready, but applyChildren went on and
// applied the StatefulSet with the Secret mounted; both subtests failed
// there ("StatefulSet exists" and "volume ... names the refused Secret").
func TestRefusedTLSSecretIsNeverMounted(t *testing.T) {
	t.Parallel()
	for field, edit := range tlsSecretEdits {
		t.Run(field+"/new cluster", func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			create(t, userSecret(ns, "victim-tls", corev1.SecretTypeTLS, nil,
				map[string]string{"tls.crt": "x", "tls.key": "victim-private-key", "ca.crt": "x"}))
			c := natsCluster(ns, "nats", edit("victim-tls"))
			create(t, c)
			secretRefused(t, c, "victim-tls")
			noStatefulSet(t, ns, "victim-tls")
			readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonSecretNotFound)
		})
		t.Run(field+"/running cluster", func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			c := natsCluster(ns, "nats")
			create(t, c)
			// Settled on its first generation: the StatefulSet as it stays.
			eventually(t, wait, func() error {
				if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(c), c); err != nil || c.Status.ObservedGeneration != c.Generation {
					return fmt.Errorf("status of generation %d not written yet (%v)", c.Generation, err)
				}
				return nil
			})
			sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}}
			get(t, sts)
			before := sts.Generation
			for _, missing := range []bool{false, true} {
				name := "victim-tls"
				if missing {
					name = "no-such-tls" // a missing Secret is refused alike
				} else {
					create(t, userSecret(ns, name, corev1.SecretTypeTLS, nil,
						map[string]string{"tls.crt": "x", "tls.key": "victim-private-key", "ca.crt": "x"}))
				}
				update(t, c, func(c *v1alpha1.NatsCluster) { edit(name)(&c.Spec) })
				secretRefused(t, c, name)
				get(t, sts)
				if m := mountsOf(sts, name); m != "" || sts.Generation != before {
					t.Fatalf("StatefulSet changed (generation %d, was %d) after the Secret was refused: %s", sts.Generation, before, m)
				}
				readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonSecretNotFound)
			}
		})
	}
}

// secretRefused waits for the pass over c's current generation to report the
// Secret refused (whatever the reason: the StatefulSet is what matters),
// naming it and the label that would opt it in. The status is written at
// the end of the pass, after any apply: once it shows, the pass is over.
func secretRefused(t *testing.T, c *v1alpha1.NatsCluster, secret string) {
	t.Helper()
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		if c.Status.ObservedGeneration != c.Generation || ready == nil || ready.Status != metav1.ConditionFalse ||
			!strings.Contains(ready.Message, `"`+secret+`"`) || !strings.Contains(ready.Message, v1alpha1.SecretAllowLabel) {
			return fmt.Errorf("generation %d observed %d, Ready %+v", c.Generation, c.Status.ObservedGeneration, ready)
		}
		return nil
	})
}

// mountsOf describes the volumes of sts that name the Secret, "" if none.
// noStatefulSet fails t when the cluster nats in ns has a StatefulSet: its
// certificate Secret secret was refused, so nothing may be applied.
func noStatefulSet(t *testing.T, ns, secret string) {
	t.Helper()
	sts := &appsv1.StatefulSet{}
	if err := k8s.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: "nats"}, sts); !apierrors.IsNotFound(err) {
		t.Fatalf("StatefulSet exists (%v) although its certificate Secret was refused: %s", err, mountsOf(sts, secret))
	}
}

func mountsOf(sts *appsv1.StatefulSet, secret string) string {
	var out []string
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == secret {
			out = append(out, fmt.Sprintf("volume %s names the refused Secret %s", v.Name, secret))
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.Secret != nil && src.Secret.Name == secret {
					out = append(out, fmt.Sprintf("projected volume %s names the refused Secret %s", v.Name, secret))
				}
			}
		}
	}
	return strings.Join(out, "; ")
}

// TestIssuedCertificateNameTakenIsRefused: with an issuerRef, the pods
// mount <name>-client-tls, which cert-manager is to write. A Secret of
// that name that already exists and is not cert-manager's for the cluster
// is someone else's: it is refused like a user's Secret, before anything
// is applied. Careless variant caught: treating every Secret of an issued
// certificate as "not written yet" (today's main): the test fails there,
// the foreign Secret never reported (Ready went CertManagerMissing here,
// where cert-manager is not installed; with it installed, the StatefulSet
// mounting the foreign Secret was applied).
func TestIssuedCertificateNameTakenIsRefused(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, userSecret(ns, "nats-client-tls", corev1.SecretTypeTLS, nil,
		map[string]string{"tls.crt": "x", "tls.key": "victim-private-key", "ca.crt": "x"}))
	c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
		s.TLS.Client = &v1alpha1.ClientTLSSpec{IssuerRef: &v1alpha1.IssuerRef{Name: "ca"}}
	})
	create(t, c)
	secretRefused(t, c, "nats-client-tls")
	noStatefulSet(t, ns, "nats-client-tls")
	readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonSecretNotFound)
}

// TestOperatorSecretsAreNeverAUsersCertificate: a tenant names, as its
// own certificate Secret (spec.tls.client.secretName,
// spec.tls.routes.secretName), Secrets the operator or cert-manager wrote
// for the cluster: the route CA with its key (<name>-ca), the client CA
// (<name>-client-ca), the route certificate with its signer
// (<name>-routes-tls), and the route CA an earlier release had
// cert-manager issue (<name>-routes-ca, a sub-CA of the issuer's CA,
// labelled as the cluster's through the Certificate's secretTemplate).
// Each is refused before anything is applied: the StatefulSet, which
// runs the tenant's image, never mounts it. Careless variant caught
// (run): the cached-Secret path before this test, which took any Secret
// carrying the cluster's instance label under whatever name the spec
// gave: <name>-ca was taken as the certificate (CertificateMissing for
// want of ca.crt, never refused), and both subtests failed waiting for
// the refusal.
func TestOperatorSecretsAreNeverAUsersCertificate(t *testing.T) {
	t.Parallel()
	for field, edit := range tlsSecretEdits {
		t.Run(field, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			c := natsCluster(ns, "nats")
			create(t, c)
			issued, err := pki.NewCA(ns+"/nats route CA", time.Now(), time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			create(t, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats-routes-ca",
					Labels: map[string]string{render.LabelInstance: "nats", render.LabelManagedBy: render.ManagedBy}},
				Type:       corev1.SecretTypeTLS,
				StringData: map[string]string{"tls.crt": issued.Cert, "tls.key": issued.Key, "ca.crt": issued.Cert},
			})
			eventually(t, wait, func() error {
				if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(c), c); err != nil || c.Status.ObservedGeneration != c.Generation {
					return fmt.Errorf("status of generation %d not written yet (%v)", c.Generation, err)
				}
				for _, name := range []string{"nats-ca", "nats-client-ca", "nats-routes-tls"} {
					if err := k8s.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{}); err != nil {
						return err
					}
				}
				return nil
			})
			sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}}
			get(t, sts)
			before, volumes := sts.Generation, sts.Spec.Template.Spec.Volumes
			for _, name := range []string{"nats-ca", "nats-client-ca", "nats-routes-tls", "nats-routes-ca"} {
				update(t, c, func(c *v1alpha1.NatsCluster) { edit(name)(&c.Spec) })
				secretRefused(t, c, name)
				// The servers' own route certificate (nats-routes-tls) is
				// mounted already, as the routes': what must not change is
				// the StatefulSet, in any volume.
				poll.Holds(t, 2*time.Second, func() error {
					if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(sts), sts); err != nil {
						return err
					}
					if sts.Generation != before || !equality.Semantic.DeepEqual(sts.Spec.Template.Spec.Volumes, volumes) {
						return fmt.Errorf("StatefulSet changed (generation %d, was %d) after %s was refused: %s", sts.Generation, before, name, mountsOf(sts, name))
					}
					return nil
				})
			}
		})
	}
}
