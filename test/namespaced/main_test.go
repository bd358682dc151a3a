// Package namespaced_test runs the operator as config/namespaced installs
// it: confined by --watch-namespaces to two namespaces, as its
// ServiceAccount, with RoleBindings in those namespaces and nothing
// cluster-wide but what that overlay grants. It proves the mode works with
// that RBAC alone, and that nothing outside the two namespaces is touched.
package namespaced_test

import (
	"context"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/inprocess"
	"github.com/kubenats/kubenats/test/rbac"
)

// The watched namespaces (the overlay's team-a and team-b) and one the
// operator must leave alone.
const (
	watchedA  = "ns-a"
	watchedB  = "ns-b"
	unwatched = "ns-c"
)

var (
	k8s         client.Client
	operatorCfg *rest.Config
)

func TestMain(m *testing.M) {
	os.Exit(inprocess.RunEnvtest(m.Run, inprocess.EnvtestOptions{
		Install: installNamespaced,
		Operator: manager.Options{
			WatchNamespaces: []string{watchedA, watchedB},
			// The suite's nats-server runs on 127.0.0.1.
			AllowLocalTargets: true,
		},
		Ready: func(e *inprocess.Envtest) { k8s, operatorCfg = e.Client, e.OperatorConfig },
	}))
}

// installNamespaced creates the three namespaces and installs the
// namespaced overlay's RBAC, its team-a and team-b bound to the watched
// two. It stands in for InstallShipped, so the admission policies are not
// installed here.
func installNamespaced(ctx context.Context, e *inprocess.Envtest) error {
	for _, ns := range []string{watchedA, watchedB, unwatched} {
		if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	return rbac.InstallNamespaced(ctx, e.Client, e.Root, map[string]string{"team-a": watchedA, "team-b": watchedB})
}
