package e2e_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/poll"
)

// TestRotatedPasswordReloads: the user's own password (spec.auth.secretRef,
// opted in), rotated in its Secret, reaches the clients' Secret within
// seconds and every server by reload: the same pods and processes, the new
// password let in on every server and the old one refused, on every server
// and over a window, once ConfigLoaded turns True.
func TestRotatedPasswordReloads(t *testing.T) {
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	const first, second = "firstPassword1", "secondPassword2"
	f, secret := formWithUserPassword(t, ns, "rotate", first)
	before := snapshot(t, f)
	history := recordStatus(t, f.Cluster)

	changed := rotatePassword(t, secret, second)
	eventually(t, wait, func() error {
		if got := credentials(t, f)["password"]; got != second {
			return fmt.Errorf("the clients' Secret does not hold the new password yet")
		}
		return nil
	})
	t.Logf("the clients' Secret holds the new password %.2fs after the rotation", time.Since(changed).Seconds())
	loaded := waitConfigLoaded(t, f, changed, wait, func() error {
		if err := everyServer(t, f, second, true); err != nil {
			return err
		}
		return everyServer(t, f, first, false)
	})
	t.Logf("ConfigLoaded True %.2fs after the rotation: %s", time.Since(changed).Seconds(), loaded.Message)
	readyOnlyOnceLoaded(t, f, history, changed)
	poll.Holds(t, 3*time.Second, func() error { return everyServer(t, f, first, false) })

	reloadedInPlace(t, f, before, snapshot(t, f))
}

// reloadedInPlace checks that every server of f, between the snapshots
// before and after, reloaded its configuration in the same process: no
// pod replaced, no container restarted, no new pod template.
func reloadedInPlace(t *testing.T, f *formed, before, after *clusterSnapshot) {
	t.Helper()
	for _, pod := range f.Pods {
		b, a := before.pods[pod], after.pods[pod]
		switch {
		case a.UID != b.UID:
			t.Errorf("%s was replaced", pod)
		case natsStatus(a).RestartCount != 0:
			t.Errorf("%s: nats container restarted", pod)
		case !after.varz[pod].Start.Equal(before.varz[pod].Start):
			t.Errorf("%s: a new process (started %s, was %s)", pod, after.varz[pod].Start, before.varz[pod].Start)
		case !after.varz[pod].ConfigLoadTime.After(before.varz[pod].ConfigLoadTime):
			t.Errorf("%s: no reload (config_load_time %s)", pod, after.varz[pod].ConfigLoadTime)
		}
	}
	if after.updateRevision != before.updateRevision {
		t.Errorf("the pod template changed (%s -> %s): a rotated password must not restart the servers", before.updateRevision, after.updateRevision)
	}
}

// formWithUserPassword forms a cluster named name whose application user
// has the user's own password (spec.auth.secretRef, opted in), and checks
// that every server lets it in.
func formWithUserPassword(t *testing.T, ns, name, password string) (*formed, *corev1.Secret) {
	t.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-creds", Labels: map[string]string{v1alpha1.SecretAllowLabel: v1alpha1.SecretAllowValue}},
		StringData: map[string]string{"password": password},
	}
	if err := cluster.Client.Create(testCtx(t), secret); err != nil {
		t.Fatal(err)
	}
	f := formNamed(t, ns, name, func(s *v1alpha1.NatsClusterSpec) {
		s.Auth.SecretRef = &v1alpha1.SecretKeyRef{Name: secret.Name, Key: "password"}
	})
	if err := everyServer(t, f, password, true); err != nil {
		t.Fatal(err)
	}
	return f, secret
}

// rotatePassword writes a new password into the user's Secret, as its
// owner would, and returns when.
func rotatePassword(t *testing.T, secret *corev1.Secret, password string) time.Time {
	t.Helper()
	secret.StringData = map[string]string{"password": password}
	if err := cluster.Client.Update(testCtx(t), secret); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

// everyServer checks that the application user with password is let in
// (or, with !accepted, refused) by each server of f on its own.
func everyServer(t *testing.T, f *formed, password string, accepted bool) error {
	ca := e2ekit.ClusterTLS(t, credentials(t, f))
	for _, pod := range f.Pods {
		nc, err := nats.Connect(podURLs(f, []string{pod}), nats.UserInfo("nats", password), clusterDNS(), ca, nats.NoReconnect(), nats.Timeout(5*time.Second))
		if err == nil {
			nc.Close()
		}
		switch {
		case accepted && err != nil:
			return fmt.Errorf("%s refuses the password: %w", pod, err)
		case !accepted && err == nil:
			return fmt.Errorf("%s still lets the old password in", pod)
		}
	}
	return nil
}
