package jobs_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jobs"
)

// TestUserIsOfAnAdmittedAccountOnThatVeryCluster: a Job connects as a
// tenant's NatsUser only when the user's account lives on the cluster
// the Job dials (name and namespace) and both are Ready: the account's
// readiness is where the cluster's admission of the tenant's namespace
// shows. Careless variants watched failing: the cluster compared by name
// alone (a user of the tenant's own "nats" taken for the platform's),
// and the account's readiness not read (a namespace the platform no
// longer admits kept backing up).
func TestUserIsOfAnAdmittedAccountOnThatVeryCluster(t *testing.T) {
	ready := []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Ready"}}
	account := func(clusterNS string, conds []metav1.Condition) *v1alpha1.NatsAccount {
		a := &v1alpha1.NatsAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "orders"},
			Spec: v1alpha1.NatsAccountSpec{Cluster: v1alpha1.ClusterRef{Name: "nats", Namespace: clusterNS}}}
		a.Status.Conditions = conds
		return a
	}
	user := &v1alpha1.NatsUser{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "backup"}, Spec: v1alpha1.NatsUserSpec{Account: "orders"}}
	user.Status.Conditions = ready
	user.Status.CredentialsSecretRef = &v1alpha1.LocalRef{Name: user.CredentialsSecretName()}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		account   *v1alpha1.NatsAccount
		clusterNS string
		refusal   string // empty: the user is taken
	}{
		{"an admitted account on the platform's cluster", account("platform", ready), "platform", ""},
		{"the tenant's own cluster of that name", account("", ready), "platform", "lives on NatsCluster team/nats, not on platform/nats"},
		{"an account on the tenant's own cluster", account("", ready), "team", ""},
		{"an account the platform no longer admits", account("platform", nil), "platform", "NatsAccount orders of NatsUser backup is not ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fake.NewClientBuilder().WithScheme(scheme).WithObjects([]client.Object{tc.account, user.DeepCopy()}...).Build()
			u, refusal, err := jobs.User(context.Background(), r, "team", "backup", tc.clusterNS, "nats", "")
			switch {
			case err != nil:
				t.Fatal(err)
			case tc.refusal == "" && (refusal != "" || u == nil):
				t.Fatalf("refused: %s", refusal)
			case tc.refusal != "" && !strings.Contains(refusal, tc.refusal):
				t.Fatalf("refusal %q, want one saying %q", refusal, tc.refusal)
			}
		})
	}
}
