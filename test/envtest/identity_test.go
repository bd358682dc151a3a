package envtest_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/rbac"
)

// The operator in this suite is its ServiceAccount, with the shipped RBAC
// and nothing more: the API server names it so, and refuses it what the
// role does not grant.
func TestOperatorRunsAsItsServiceAccount(t *testing.T) {
	t.Parallel()
	op, err := client.New(operatorCfg, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	review := &authenticationv1.SelfSubjectReview{}
	if err := op.Create(ctx(t), review); err != nil {
		t.Fatal(err)
	}
	if got := review.Status.UserInfo.Username; got != rbac.User {
		t.Fatalf("the operator acts as %q, want %q", got, rbac.User)
	}

	ns := namespace(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "someones"}, StringData: map[string]string{"k": "v"}}
	create(t, secret)
	outside := map[string]func() error{
		"list deployments": func() error { return op.List(ctx(t), &appsv1.DeploymentList{}) },
		"delete a Secret":  func() error { return op.Delete(ctx(t), secret) },
		"update a Secret":  func() error { return op.Update(ctx(t), secret) },
		"create a namespace": func() error {
			return op.Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "made-by-the-operator"}})
		},
		// Nodes are listed and watched for their zone labels, nothing more.
		"get a node":         func() error { return op.Get(ctx(t), client.ObjectKey{Name: "any"}, &corev1.Node{}) },
		"delete a node":      func() error { return op.Delete(ctx(t), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "any"}}) },
		"delete a ConfigMap": func() error { return op.DeleteAllOf(ctx(t), &corev1.ConfigMap{}, client.InNamespace(ns)) },
		"create a pod": func() error {
			return op.Create(ctx(t), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}})
		},
		"read a ServiceAccount token": func() error {
			return op.SubResource("token").Create(ctx(t), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}, &authenticationv1.TokenRequest{})
		},
	}
	for what, call := range outside {
		if err := call(); !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want forbidden", what, err)
		}
	}
}

// The API server here enforces owner-reference permissions, as hardened
// clusters do: a child that blocks its NatsCluster's deletion needs update
// on natsclusters/finalizers. Someone who may create ConfigMaps but not
// that is refused; the operator, whose children all carry such a
// reference, is not.
func TestOwnerReferencePermissionsAreEnforced(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := natsCluster(ns, "owner")
	create(t, c)
	create(t, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "configmaps"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}}},
	})
	create(t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "configmaps"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "configmaps"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "configmap-maker"}},
	})
	maker := rest.CopyConfig(cfg)
	maker.Impersonate = rest.ImpersonationConfig{UserName: "configmap-maker"}
	child := func(name string) *corev1.ConfigMap {
		// Labelled as the operator's children are: the admission policy
		// refuses the operator anything else (operator_writes_test.go).
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{render.LabelManagedBy: render.ManagedBy}, OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1alpha1.GroupVersion.String(), Kind: "NatsCluster", Name: c.Name, UID: c.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}}}}
	}
	for _, who := range []struct {
		name    string
		cfg     *rest.Config
		allowed bool
	}{{"configmap-maker", maker, false}, {"the operator", operatorCfg, true}} {
		cl, err := client.New(who.cfg, client.Options{Scheme: manager.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		err = cl.Create(ctx(t), child(strings.ReplaceAll(who.name, " ", "-")))
		if who.allowed && err != nil {
			t.Errorf("%s could not make a child: %v", who.name, err)
		}
		if !who.allowed && !apierrors.IsForbidden(err) {
			t.Errorf("%s made a child blocking its owner's deletion: %v, want forbidden", who.name, err)
		}
	}
}
