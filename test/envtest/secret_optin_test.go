package envtest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// optedIn is the label by which a Secret's owner lets kubenats use it.
var optedIn = map[string]string{v1alpha1.SecretAllowLabel: v1alpha1.SecretAllowValue}

// userSecret is a Secret named name in ns with data and labels.
func userSecret(ns, name string, typ corev1.SecretType, labels map[string]string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Type: typ, StringData: data}
	if typ == corev1.SecretTypeServiceAccountToken {
		s.Annotations = map[string]string{corev1.ServiceAccountNameKey: "default"}
	}
	return s
}

// forbiddenSecrets are Secrets no reference may use, each of them holding
// the secret value under the key, with what makes it forbidden.
func forbiddenSecrets(ns, name, key, value string) map[string]*corev1.Secret {
	data := map[string]string{key: value, "unrelated-key": "other-" + value}
	return map[string]*corev1.Secret{
		"missing":                   nil,
		"not opted in":              userSecret(ns, name, corev1.SecretTypeOpaque, nil, data),
		"opted in with false":       userSecret(ns, name, corev1.SecretTypeOpaque, map[string]string{v1alpha1.SecretAllowLabel: "false"}, data),
		"a service-account token":   userSecret(ns, name, corev1.SecretTypeServiceAccountToken, optedIn, data),
		"a registry credential":     userSecret(ns, name, corev1.SecretTypeDockerConfigJson, optedIn, map[string]string{corev1.DockerConfigJsonKey: `{"auths":{}}`, key: value}),
		"a foreign type":            userSecret(ns, name, "example.com/vault", optedIn, data),
		"labelled as kubenats' own": userSecret(ns, name, corev1.SecretTypeOpaque, map[string]string{v1alpha1.SecretAllowLabel: "true", render.LabelManagedBy: render.ManagedBy}, data),
	}
}

// TestClusterUsesOnlyOptedInSecrets names, in spec.auth.secretRef, Secrets
// their owners did not open to kubenats. Each is refused with one and the
// same message, which tells neither whether the Secret exists nor its type
// nor its keys, and its value reaches no object the operator writes.
func TestClusterUsesOnlyOptedInSecrets(t *testing.T) {
	t.Parallel()
	const value = "tenant-db-Passw0rd"
	var messages []string
	for what, secret := range forbiddenSecrets("", "db", "pw", value) {
		t.Run(what, func(t *testing.T) {
			ns := namespace(t)
			if secret != nil {
				secret.Namespace = ns
				create(t, secret)
			}
			c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
				s.Auth.SecretRef = &v1alpha1.SecretKeyRef{Name: "db", Key: "pw"}
			})
			create(t, c)
			c = readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonSecretNotFound)
			msg := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady).Message
			for _, leak := range []string{value, "unrelated-key", string(corev1.SecretTypeServiceAccountToken), "vault", "dockerconfig", `"pw"`} {
				if strings.Contains(msg, leak) {
					t.Fatalf("refusal %q reveals %q", msg, leak)
				}
			}
			messages = append(messages, strings.ReplaceAll(msg, ns, "NS"))
			// Nothing of the cluster is made while its Secret is refused:
			// no server could start with the value, no Secret carries it:
			// not the clients' Secret, not <name>-users (whose users.conf
			// would hold the password the servers read), nor any other.
			for _, obj := range []client.Object{
				&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "nats"}},
				&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: c.CredentialsSecretName()}},
				&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: c.UsersSecretName()}},
			} {
				obj.SetNamespace(ns)
				if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
					t.Fatalf("%T %s exists (%v) although the Secret was refused", obj, obj.GetName(), err)
				}
			}
			var all corev1.SecretList
			if err := k8s.List(ctx(t), &all, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			for _, s := range all.Items {
				for key, data := range s.Data {
					if s.Name != "db" && strings.Contains(string(data), value) {
						t.Fatalf("Secret %s (key %s) carries the refused value", s.Name, key)
					}
				}
			}
		})
	}
	for _, m := range messages[1:] {
		if m != messages[0] {
			t.Fatalf("refusals differ, which tells the Secrets apart: %q and %q", messages[0], m)
		}
	}
}

// TestOptedInSecretRotationReachesTheCluster changes an opted-in Secret, and
// nothing else: the operator watches such Secrets, so the servers'
// users.conf and the clients' Secret carry the new password within
// seconds, not at a retry, and the pod template stays as it was (the
// servers take it by reload, not by a restart).
func TestOptedInSecretRotationReachesTheCluster(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	// Not opted in yet: refused.
	secret := userSecret(ns, "db", corev1.SecretTypeOpaque, nil, map[string]string{"pw": "first-Passw0rd"})
	create(t, secret)
	c := natsCluster(ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
		s.Auth.SecretRef = &v1alpha1.SecretKeyRef{Name: "db", Key: "pw"}
	})
	create(t, c)
	readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonSecretNotFound)

	// The owner opts in: the cluster is made at once.
	update(t, secret, func(s *corev1.Secret) { s.Labels = optedIn })
	hash := func() (string, error) {
		var sts appsv1.StatefulSet
		if err := k8s.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: "nats"}, &sts); err != nil {
			return "", err
		}
		return sts.Spec.Template.Annotations[render.AnnotationCredentialsHash], nil
	}
	var before string
	poll := func(check func() error) { eventually(t, promptly, check) }
	poll(func() (err error) {
		before, err = hash()
		return err
	})
	users := &corev1.Secret{}
	poll(func() error { return k8s.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: "nats-users"}, users) })

	update(t, secret, func(s *corev1.Secret) { s.Data["pw"] = []byte("second-Passw0rd") })
	poll(func() error {
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(users), users); err != nil {
			return err
		}
		if !strings.Contains(string(users.Data[render.UsersConfKey]), "second-Passw0rd") {
			return fmt.Errorf("users.conf does not carry the rotated password yet")
		}
		return nil
	})
	if h, err := hash(); err != nil || h != before {
		t.Errorf("credentials hash %s (%v), was %s: a rotated password must not restart the servers", h, err, before)
	}
	poll(func() error {
		creds := &corev1.Secret{}
		if err := k8s.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: "nats-client"}, creds); err != nil {
			return err
		}
		if !strings.Contains(string(creds.Data[render.CredentialsURLKey]), "second-Passw0rd") {
			return fmt.Errorf("the client credentials do not carry the rotated password")
		}
		return nil
	})
}

// promptly is how soon a watched change must show: well under the retry
// periods (30 seconds and more) a missed watch would fall back to.
const promptly = 10 * time.Second
