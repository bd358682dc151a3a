package envtest_test

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manager"
)

// actingAs is a client for user, bound in ns to a Role with rules.
func actingAs(t *testing.T, ns, user string, rules ...rbacv1.PolicyRule) client.Client {
	t.Helper()
	create(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user}, Rules: rules})
	create(t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: user}},
	})
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: user}
	cl, err := client.New(as, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// TestPublishingTheServiceNeedsTheRightToMakeServices: a NatsCluster whose
// client Service is a NodePort or LoadBalancer, or carries annotations,
// is admitted only for a requester who may create Services in the
// namespace: the operator writes the Service with rights of its own, and
// must not publish for a tenant what the tenant's RBAC refuses it. An edit
// that leaves spec.service alone is not asked again. Careless variants
// caught: no policy (the NatsCluster-only tenant gets its load balancer),
// a policy on the type alone (annotations, which drive external DNS and
// cloud load balancers, pass), and a policy that asks on every update
// (the tenant can no longer scale a cluster its admin published).
func TestPublishingTheServiceNeedsTheRightToMakeServices(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	clusters := rbacv1.PolicyRule{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"natsclusters"}, Verbs: []string{"create", "get", "update"}}
	services := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"create"}}
	tenant := actingAs(t, ns, "tenant", clusters)
	publisher := actingAs(t, ns, "publisher", clusters, services)

	loadBalancer := func(s *v1alpha1.NatsClusterSpec) { s.Service.Type = "LoadBalancer" }
	nodePort := func(s *v1alpha1.NatsClusterSpec) { s.Service.Type = "NodePort" }
	annotated := func(s *v1alpha1.NatsClusterSpec) {
		s.Service.Annotations = map[string]string{"external-dns.alpha.kubernetes.io/hostname": "nats.example.com"}
	}
	clusterIP := func(s *v1alpha1.NatsClusterSpec) { s.Service.Type = "ClusterIP" }
	refused := func(err error) bool {
		return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "spec.service") &&
			strings.Contains(err.Error(), "may not create Services in namespace "+ns)
	}
	for _, tc := range []struct {
		name    string
		as      client.Client
		edit    func(*v1alpha1.NatsClusterSpec)
		allowed bool
	}{
		{"tenant-lb", tenant, loadBalancer, false},
		{"tenant-nodeport", tenant, nodePort, false},
		{"tenant-annotations", tenant, annotated, false},
		{"tenant-clusterip", tenant, clusterIP, true},
		{"publisher-lb", publisher, loadBalancer, true},
		{"publisher-annotations", publisher, annotated, true},
	} {
		err := tc.as.Create(ctx(t), natsCluster(ns, tc.name, tc.edit))
		if tc.allowed && err != nil {
			t.Errorf("%s: %v, want admitted", tc.name, err)
		}
		if !tc.allowed && !refused(err) {
			t.Errorf("%s: %v, want forbidden naming spec.service and the namespace", tc.name, err)
		}
	}

	// The publisher's cluster: the tenant may scale it, not re-annotate it.
	// Each edit is made on the live object, again when it lost a race with
	// the operator's own write (the deletion guard's finalizer, added by
	// its first pass: a clean CI run got a 409 here instead of the verdict).
	key := client.ObjectKey{Namespace: ns, Name: "publisher-annotations"}
	if err := updateAs(t, tenant, key, func(s *v1alpha1.NatsClusterSpec) { s.Replicas = ptr.To[int32](5) }); err != nil {
		t.Errorf("the tenant scaling a published cluster: %v, want admitted", err)
	}
	if err := updateAs(t, tenant, key, func(s *v1alpha1.NatsClusterSpec) {
		s.Service.Annotations["external-dns.alpha.kubernetes.io/hostname"] = "bank.example.com"
	}); !refused(err) {
		t.Errorf("the tenant re-annotating a published cluster: %v, want forbidden", err)
	}
}

// updateAs applies edit to the live NatsCluster key as cl and updates it,
// again while the update loses a race (409): the answer is the API
// server's verdict on the edit.
func updateAs(t *testing.T, cl client.Client, key client.ObjectKey, edit func(*v1alpha1.NatsClusterSpec)) error {
	t.Helper()
	for range 50 {
		var c v1alpha1.NatsCluster
		if err := cl.Get(ctx(t), key, &c); err != nil {
			t.Fatal(err)
		}
		edit(&c.Spec)
		if err := cl.Update(ctx(t), &c); !apierrors.IsConflict(err) {
			return err
		}
	}
	t.Fatal("50 updates in a row lost a race")
	return nil
}

// TestPublishingTheWebSocketIngressNeedsTheRightToMakeIngresses: a
// NatsCluster asking for a WebSocket Ingress is admitted only for a
// requester who may create Ingresses in the namespace, the right to make
// Services not being enough; an edit that leaves the Ingress as it was is
// not asked again, one that moves its host is. Careless variants caught
// (run): the publishing policy without its Ingress rule (the
// NatsCluster-only tenant gets its Ingress, written with the operator's
// rights), and a rule that asks on every update (the tenant can no longer
// scale a cluster its admin published).
func TestPublishingTheWebSocketIngressNeedsTheRightToMakeIngresses(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	clusters := rbacv1.PolicyRule{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"natsclusters"}, Verbs: []string{"create", "get", "update"}}
	services := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"create"}}
	ingresses := rbacv1.PolicyRule{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: []string{"create"}}
	tenant := actingAs(t, ns, "tenant", clusters, services)
	publisher := actingAs(t, ns, "publisher", clusters, ingresses)
	refused := func(err error) bool {
		return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "spec.websocket.ingress") &&
			strings.Contains(err.Error(), "may not create Ingresses in namespace "+ns)
	}
	if err := tenant.Create(ctx(t), natsCluster(ns, "tenant", withWebSocketIngress("nats.example.com"))); !refused(err) {
		t.Errorf("the tenant asking for an Ingress: %v, want forbidden naming spec.websocket.ingress and the namespace", err)
	}
	if err := tenant.Create(ctx(t), natsCluster(ns, "plain", func(s *v1alpha1.NatsClusterSpec) {
		s.WebSocket = &v1alpha1.WebSocketSpec{NoTLS: true}
	})); err != nil {
		t.Errorf("the tenant's WebSocket without an Ingress: %v, want admitted", err)
	}
	if err := publisher.Create(ctx(t), natsCluster(ns, "published", withWebSocketIngress("nats.example.com"))); err != nil {
		t.Fatalf("the publisher asking for an Ingress: %v, want admitted", err)
	}
	key := client.ObjectKey{Namespace: ns, Name: "published"}
	if err := updateAs(t, tenant, key, func(s *v1alpha1.NatsClusterSpec) { s.Replicas = ptr.To[int32](5) }); err != nil {
		t.Errorf("the tenant scaling a published cluster: %v, want admitted", err)
	}
	if err := updateAs(t, tenant, key, func(s *v1alpha1.NatsClusterSpec) { s.WebSocket.Ingress.Host = "bank.example.com" }); !refused(err) {
		t.Errorf("the tenant moving the Ingress's host: %v, want forbidden", err)
	}
}
