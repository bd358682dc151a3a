package e2e_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/rbac"
)

// The operator of this suite reaches the API server as its ServiceAccount,
// with the shipped RBAC: the API server names it so, and refuses it what
// the role does not grant.
func TestOperatorRunsAsItsServiceAccount(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	op, err := client.New(rbac.Config(cluster.Config), client.Options{Scheme: manager.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	review := &authenticationv1.SelfSubjectReview{}
	if err := op.Create(ctx, review); err != nil {
		t.Fatal(err)
	}
	if got := review.Status.UserInfo.Username; got != rbac.User {
		t.Fatalf("the operator acts as %q, want %q", got, rbac.User)
	}
	if err := op.List(ctx, &appsv1.DeploymentList{}); !apierrors.IsForbidden(err) {
		t.Fatalf("listing Deployments: %v, want forbidden", err)
	}
}
