package envtest_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natscluster"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/poll"
)

// TestDeletedGeneratedSecretIsReportedNotRemade: a generated Secret (route
// password, system password, client password, route CA) deleted under a
// running cluster is not made anew with new values, which would restart or
// lock out every server: Ready False with GeneratedSecretMissing and a
// Warning event, while over a window the Secret stays gone and the
// StatefulSet and the ConfigMap stay as they were. Naming it in
// kubenats.io/regenerate-secrets makes it anew, with a new value.
func TestDeletedGeneratedSecretIsReportedNotRemade(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		secret string
		key    string
	}{
		{"nats-routes", render.PasswordKey},
		{"nats-system", render.PasswordKey},
		{"nats-auth", render.PasswordKey},
		{"nats-ca", render.TLSKeyKey},
	} {
		t.Run(tc.secret, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			c := natsCluster(ns, "nats")
			create(t, c)
			sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}}
			get(t, sts)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats-config"}}
			get(t, cm)
			users := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats-users"}}
			get(t, users)
			victim := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.secret}}
			get(t, victim)
			old := string(victim.Data[tc.key])

			if err := k8s.Delete(ctx(t), victim); err != nil {
				t.Fatal(err)
			}
			readyCondition(t, c, metav1.ConditionFalse, v1alpha1.ReasonGeneratedSecretMissing)
			eventually(t, wait, func() error { return eventAbout(t, c, v1alpha1.ReasonGeneratedSecretMissing, tc.secret) })
			poll.Holds(t, 3*time.Second, func() error {
				if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(victim), &corev1.Secret{}); !apierrors.IsNotFound(err) {
					return fmt.Errorf("Secret %s made anew (%v)", tc.secret, err)
				}
				return unchanged(t, sts, cm, users)
			})

			update(t, c, func(c *v1alpha1.NatsCluster) {
				c.Annotations = map[string]string{natscluster.AnnotationRegenerateSecrets: "something-else, " + tc.secret}
			})
			eventually(t, wait, func() error {
				fresh := &corev1.Secret{}
				if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(victim), fresh); err != nil {
					return err
				}
				if v := string(fresh.Data[tc.key]); v == "" || v == old {
					return fmt.Errorf("Secret %s made anew with its old value or none", tc.secret)
				}
				return nil
			})
			eventually(t, wait, func() error {
				if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(c), c); err != nil {
					return err
				}
				if c.Status.Phase == v1alpha1.PhaseFailed {
					return fmt.Errorf("phase %s after the regeneration", c.Status.Phase)
				}
				return nil
			})
		})
	}
}

// unchanged says which of the objects the servers run from changed since
// they were read.
func unchanged(t *testing.T, objs ...client.Object) error {
	for _, was := range objs {
		now := was.DeepCopyObject().(client.Object)
		if err := k8s.Get(ctx(t), client.ObjectKeyFromObject(was), now); err != nil {
			return err
		}
		if now.GetResourceVersion() != was.GetResourceVersion() {
			return fmt.Errorf("%s changed while the Secret was missing", was.GetName())
		}
	}
	return nil
}
