package envtest_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/internal/webhook"
	"github.com/kubenats/kubenats/test/rbac"
)

// TestUnknownAccountRefusedAtAdmission: with the shipped webhook
// configuration (its CA bundle left empty, as shipped) and the operator
// serving it, a NatsUser or a Stream naming an account its namespace does
// not have is refused at creation with the field named, while:
//   - a user created right after its account (no wait) is admitted: the
//     webhook asks the API server, not its cache;
//   - an object naming no account is not even sent;
//   - an account of the same name in another namespace does not count:
//     a user naming it is refused, and one in the account's own namespace
//     is admitted;
//   - an update of a user whose account is gone goes through (its
//     finalizer must be removable);
//   - with no operator answering, the user is admitted (failure policy
//     Ignore) and its condition reports the missing account;
//   - the configuration applied anew (an upgrade empties its CA bundle) is
//     trusted again by the operator.
//
// Careless variants, each run: the CA bundle never written (the API server
// cannot call the webhook; failure policy Ignore admits everything: the
// first wait fails), the account read from the cache (users made right
// after their account were refused), updates reviewed too (the label
// update was refused), the configuration not watched (the bundle stayed
// empty and the refusal never came back), the lookup blind to the
// namespace (every NatsAccount listed and matched by name alone: "a user
// naming an account that only another namespace has was admitted").
//
// Not parallel: it points the one webhook configuration every test's
// NatsUsers and Streams pass through at a closed address, and empties its
// CA bundle.
func TestUnknownAccountRefusedAtAdmission(t *testing.T) {
	ns := namespace(t)
	orphan := func(name string) *v1alpha1.NatsUser {
		return &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.NatsUserSpec{Account: "nope"}}
	}
	refused := func() error {
		err := k8s.Create(ctx(t), orphan("probe"), client.DryRunAll)
		if err == nil {
			return errors.New("a user of a missing account was admitted")
		}
		return nil
	}
	eventually(t, wait, refused)

	err := k8s.Create(ctx(t), orphan("orphan"))
	assertInvalid(t, err, `spec.account: Not found: "nope"`, "namespace "+ns)
	if !hasCause(err, "spec.account") {
		t.Errorf("the refusal carries no cause on spec.account: %v", err)
	}
	stream := &v1alpha1.Stream{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders"},
		Spec: v1alpha1.StreamSpec{Target: v1alpha1.Target{Cluster: &v1alpha1.ClusterRef{Name: "nats"}, Account: "nope"},
			Name: "ORDERS", Subjects: []string{"orders.>"}}}
	assertInvalid(t, k8s.Create(ctx(t), stream, client.DryRunAll), `spec.account: Not found: "nope"`)
	stream.Spec.Account = ""
	if err := k8s.Create(ctx(t), stream, client.DryRunAll); err != nil {
		t.Errorf("a Stream naming no account: %v", err)
	}

	// The same name in another namespace is not this namespace's account.
	elsewhere := namespace(t)
	create(t, &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: elsewhere, Name: "shared"},
		Spec: v1alpha1.NatsAccountSpec{Cluster: v1alpha1.ClusterRef{Name: "nats"}}})
	borrower := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "borrower"},
		Spec: v1alpha1.NatsUserSpec{Account: "shared"}}
	if err := k8s.Create(ctx(t), borrower, client.DryRunAll); err == nil {
		t.Error("a user naming an account that only another namespace has was admitted")
	} else {
		assertInvalid(t, err, `spec.account: Not found: "shared"`, "namespace "+ns)
	}
	borrower.Namespace = elsewhere
	if err := k8s.Create(ctx(t), borrower, client.DryRunAll); err != nil {
		t.Errorf("a user of an account in its own namespace: %v", err)
	}

	// Each user right behind its account: the cache has not seen most
	// of these accounts yet.
	for i := range 20 {
		account := &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("team-%d", i)},
			Spec: v1alpha1.NatsAccountSpec{Cluster: v1alpha1.ClusterRef{Name: "nats"}}}
		create(t, account)
		user := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("user-%d", i)},
			Spec: v1alpha1.NatsUserSpec{Account: account.Name}}
		if err := k8s.Create(ctx(t), user); err != nil {
			t.Fatalf("a user made right after its account: %v", err)
		}
	}

	gone := &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-0"}}
	if err := k8s.Delete(ctx(t), gone); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		err := k8s.Get(ctx(t), client.ObjectKeyFromObject(gone), gone)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("the account is still there: %v", err)
	})
	patch := []byte(`{"metadata":{"labels":{"edited":"yes"}}}`)
	user := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "user-0"}}
	if err := k8s.Patch(ctx(t), user, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Errorf("an update of a user whose account is gone: %v", err)
	}

	secret := &corev1.Secret{}
	if err := k8s.Get(ctx(t), client.ObjectKey{Namespace: rbac.Namespace, Name: webhook.SecretName}, secret); err != nil {
		t.Fatal(err)
	}
	if secret.Labels[render.LabelManagedBy] != render.ManagedBy || secret.Type != corev1.SecretTypeTLS {
		t.Errorf("the serving Secret: labels %v, type %s", secret.Labels, secret.Type)
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := k8s.Get(ctx(t), client.ObjectKey{Name: webhook.ConfigurationName}, vwc); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(vwc.Webhooks[0].ClientConfig.CABundle, secret.Data["ca.crt"]) {
		t.Error("the configuration does not trust the Secret's CA")
	}

	// No operator answering: admitted (failure policy Ignore), and the
	// user's condition says what the refusal would have.
	served := *vwc.Webhooks[0].ClientConfig.URL
	setWebhookURL(t, "https://"+closedAddr(t)+webhook.AccountReferencePath)
	eventually(t, wait, func() error { return k8s.Create(ctx(t), orphan("probe"), client.DryRunAll) })
	create(t, orphan("unchecked"))
	eventually(t, wait, func() error {
		u := &v1alpha1.NatsUser{}
		if err := k8s.Get(ctx(t), types.NamespacedName{Namespace: ns, Name: "unchecked"}, u); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(u.Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Reason != v1alpha1.ReasonAccountNotFound {
			return fmt.Errorf("Ready is %+v, want reason %s", c, v1alpha1.ReasonAccountNotFound)
		}
		return nil
	})
	setWebhookURL(t, served)
	eventually(t, wait, refused)

	// Applied anew, as shipped (an upgrade): the operator trusts its CA
	// in it again.
	vwc = &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := k8s.Get(ctx(t), client.ObjectKey{Name: webhook.ConfigurationName}, vwc); err != nil {
		t.Fatal(err)
	}
	for i := range vwc.Webhooks {
		vwc.Webhooks[i].ClientConfig.CABundle = nil
	}
	if err := k8s.Update(ctx(t), vwc); err != nil {
		t.Fatal(err)
	}
	eventually(t, wait, func() error {
		if err := k8s.Get(ctx(t), client.ObjectKey{Name: webhook.ConfigurationName}, vwc); err != nil {
			return err
		}
		if !bytes.Equal(vwc.Webhooks[0].ClientConfig.CABundle, secret.Data["ca.crt"]) {
			return errors.New("the configuration applied anew does not trust the webhook's CA")
		}
		return nil
	})
	eventually(t, wait, refused)
}

// setWebhookURL points the webhook configuration at url.
func setWebhookURL(t *testing.T, url string) {
	t.Helper()
	for range 50 {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := k8s.Get(ctx(t), client.ObjectKey{Name: webhook.ConfigurationName}, vwc); err != nil {
			t.Fatal(err)
		}
		for i := range vwc.Webhooks {
			vwc.Webhooks[i].ClientConfig.URL = &url
		}
		if err := k8s.Update(ctx(t), vwc); !apierrors.IsConflict(err) {
			if err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("50 updates in a row lost a race")
}

// closedAddr is a loopback address nothing listens on (a port of
// freePort's, which nothing else takes meanwhile).
func closedAddr(t *testing.T) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
}

func hasCause(err error, field string) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == field && strings.Contains(c.Message, "Not found") {
			return true
		}
	}
	return false
}
