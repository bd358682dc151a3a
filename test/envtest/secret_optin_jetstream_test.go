package envtest_test

import (
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/poll"
	"github.com/kubenats/kubenats/test/testnats"
)

// connections is how many client connections s has ever had.
func connections(t *testing.T, s *server.Server) uint64 {
	v, err := s.Varz(nil)
	if err != nil {
		t.Fatal(err)
	}
	return v.TotalConnections
}

// TestConnectionUsesOnlyOptedInSecrets names Secrets their owners did not
// open to kubenats in credentialsSecretRef and tlsSecretRef. Each is
// refused with the same message, which reveals nothing of the Secret, and
// the operator never dials the server with it: the server named in the
// resource sees no connection at all.
func TestConnectionUsesOnlyOptedInSecrets(t *testing.T) {
	t.Parallel()
	const value = "tenant-db-Passw0rd"
	s := natsServer(t, 0)
	refs := map[string]func(*v1alpha1.Connection){
		"credentials": func(c *v1alpha1.Connection) { c.CredentialsSecretRef = &v1alpha1.LocalRef{Name: "db"} },
		"tls":         func(c *v1alpha1.Connection) { c.TLSSecretRef = &v1alpha1.LocalRef{Name: "db"} },
	}
	for field, setRef := range refs {
		var (
			mu       sync.Mutex
			messages []string
		)
		// Each case in a namespace of its own, all at once; t.Run(field)
		// returns once they all have.
		t.Run(field, func(t *testing.T) {
			for what, secret := range forbiddenSecrets("", "db", "password", value) {
				t.Run(what, func(t *testing.T) {
					t.Parallel()
					ns := namespace(t)
					if secret != nil {
						secret.Namespace = ns
						// The Secrets share their data: a copy of their
						// own, as the cases run at once.
						secret.StringData = maps.Clone(secret.StringData)
						secret.StringData["user"] = "app"
						create(t, secret)
					}
					st := newStream(ns, "refused", at(serverURL(s)), func(sp *v1alpha1.StreamSpec) { setRef(sp.Connection) })
					create(t, st)
					jsReady(t, st, metav1.ConditionFalse, "SecretNotFound")
					msg := meta.FindStatusCondition(st.Status.Conditions, v1alpha1.ConditionReady).Message
					for _, leak := range []string{value, "unrelated-key", "user", string(corev1.SecretTypeServiceAccountToken), "vault", "dockerconfig"} {
						if strings.Contains(msg, leak) {
							t.Fatalf("refusal %q reveals %q", msg, leak)
						}
					}
					mu.Lock()
					messages = append(messages, strings.ReplaceAll(msg, ns, "NS"))
					mu.Unlock()
				})
			}
		})
		for _, m := range messages[1:] {
			if m != messages[0] {
				t.Fatalf("%s refusals differ, which tells the Secrets apart: %q and %q", field, messages[0], m)
			}
		}
	}
	poll.Holds(t, 2*time.Second, func() error {
		if n := connections(t, s); n != 0 {
			return fmt.Errorf("the server had %d connections: a refused Secret was used", n)
		}
		return nil
	})
}

// TestOptedInSecretRotationReachesThePool opts a Secret in and then
// rotates it, touching nothing else: the operator watches opted-in
// Secrets, so the resource syncs as soon as its owner opts in, and the
// pool connects with the new credentials within seconds, not at the
// ten-minute resync.
func TestOptedInSecretRotationReachesThePool(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	s := testnats.Start(t, freePort(t), func(o *server.Options) {
		o.Users = []*server.User{{Username: "app", Password: "one"}, {Username: "ops", Password: "two"}}
	})
	secret := userSecret(ns, "login", corev1.SecretTypeOpaque, nil, map[string]string{"user": "app", "password": "one"})
	create(t, secret)
	st := newStream(ns, "rotating", at(serverURL(s)), func(sp *v1alpha1.StreamSpec) {
		sp.Connection.CredentialsSecretRef = &v1alpha1.LocalRef{Name: "login"}
	})
	create(t, st)
	jsReady(t, st, metav1.ConditionFalse, "SecretNotFound")

	update(t, secret, func(s *corev1.Secret) { s.Labels = optedIn })
	connectedAs := func(user string) func() error {
		return func() error {
			cz, err := s.Connz(&server.ConnzOptions{Username: true})
			if err != nil {
				return err
			}
			var seen []string
			for _, c := range cz.Conns {
				if c.AuthorizedUser == user {
					return nil
				}
				seen = append(seen, c.AuthorizedUser)
			}
			return fmt.Errorf("no connection as %s; connected: %v", user, seen)
		}
	}
	eventually(t, promptly, connectedAs("app"))
	jsReady(t, st, metav1.ConditionTrue, "Synced")

	update(t, secret, func(s *corev1.Secret) {
		s.Data = map[string][]byte{"user": []byte("ops"), "password": []byte("two")}
	})
	eventually(t, promptly, connectedAs("ops"))
}
