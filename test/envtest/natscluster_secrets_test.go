package envtest_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// secretValues are every value of every Secret in ns.
func secretValues(t *testing.T, ns string) []string {
	t.Helper()
	var list corev1.SecretList
	if err := k8s.List(ctx(t), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list.Items {
		for k, v := range s.Data {
			if k == render.CredentialsServersKey || k == render.CredentialsUserKey || k == render.TLSCertKey || k == render.TLSCAKey || k == render.RouteSignerCertKey {
				continue // no secrets: the URL without credentials, the user name, certificates
			}
			out = append(out, string(v))
		}
	}
	return out
}

// assertNoSecretIn fails when any secret value occurs in what.
func assertNoSecretIn(t *testing.T, where string, what any, secrets []string) {
	t.Helper()
	b, err := json.Marshal(what)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if strings.Contains(string(b), s) {
			t.Fatalf("a secret value appears in %s", where)
		}
	}
}

func TestNoCredentialAppearsInConfigMapsStatusOrEvents(t *testing.T) {
	t.Parallel()
	for _, mode := range []v1alpha1.AuthMode{v1alpha1.AuthUsers, v1alpha1.AuthToken} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) { s.Auth.Mode = mode })
			create(t, c)
			// A conflict makes the operator write an event and a failing status,
			// the places a careless message would leak into.
			create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}})
			c = readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonNameConflict)
			eventually(t, wait, func() error { return eventWithReason(t, ns, v1alpha1.ReasonNameConflict) })

			get(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats-client"}})
			secrets := secretValues(t, ns)
			// users: nats-auth password, nats-system password, nats-users
			// users.conf, nats-client url and password; token: nats-auth token, nats-client url and token.
			// Both: nats-routes password and urls, the private keys of nats-ca
			// and nats-routes-tls, the key of the CA that signed the
			// route certificate (signer.key, kept for a replaced CA's
			// overlap), and the private keys of nats-client-ca and
			// nats-client-tls.
			want := map[v1alpha1.AuthMode]int{v1alpha1.AuthUsers: 12, v1alpha1.AuthToken: 10}[mode]
			if len(secrets) != want {
				t.Fatalf("%d secret values in %s, want %d", len(secrets), ns, want)
			}
			for _, s := range secrets {
				if len(s) < 8 {
					t.Fatalf("secret value %q too short to search for", s)
				}
			}
			var cms corev1.ConfigMapList
			if err := k8s.List(ctx(t), &cms, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			assertNoSecretIn(t, "a ConfigMap", cms.Items, secrets)
			assertNoSecretIn(t, "the NatsCluster status", c.Status, secrets)
			var events eventsv1.EventList
			if err := k8s.List(ctx(t), &events, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			assertNoSecretIn(t, "an event", events.Items, secrets)
		})
	}
}

func TestUserSecretIsUsedAndItsAbsenceReported(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
		s.Auth.SecretRef = &v1alpha1.SecretKeyRef{Name: "my-password", Key: "pw"}
		s.Auth.User = "app"
	})
	create(t, c)
	readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonSecretNotFound)

	// The operator watches opted-in Secrets: the new one wakes it.
	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "my-password", Labels: optedIn},
		StringData: map[string]string{"pw": "s3cret-Passw0rd"},
	})
	readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonProgressing)

	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats-client"}}
	get(t, creds)
	if got, want := string(creds.Data[render.CredentialsURLKey]), fmt.Sprintf("tls://app:s3cret-Passw0rd@nats.%s.svc:4222", ns); got != want {
		t.Fatalf("credentials url = %q, want %q", got, want)
	}
	if err := k8s.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: "nats-auth"}, &corev1.Secret{}); err == nil {
		t.Fatal("nats-auth was generated although the user brought a Secret")
	}
}

func TestNumericTokenIsRefusedWithAReason(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "token", Labels: optedIn},
		StringData: map[string]string{"token": "0123456789"},
	})
	c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
		s.Auth.Mode = v1alpha1.AuthToken
		s.Auth.SecretRef = &v1alpha1.SecretKeyRef{Name: "token", Key: "token"}
	})
	create(t, c)
	c = readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonSecretInvalid)
	if msg := c.Status.Conditions[0].Message; !strings.Contains(msg, "not a string") || strings.Contains(msg, "0123456789") {
		t.Fatalf("message %q should explain the number problem without quoting the token", msg)
	}
}
