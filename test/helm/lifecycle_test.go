package helm

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manager"
	"github.com/kubenats/kubenats/test/inprocess"
	"github.com/kubenats/kubenats/test/rbac"
)

// oldLabel marks the CRDs of the "previous" chart the upgrade starts from.
const oldLabel = "kubenats.io/chart-test"

// previousChart is the chart as an older release would ship it: its
// NatsCluster CRD differs (a label), so the upgrade shows whether the CRDs
// are upgraded with the chart. CRDs in a chart's crds/ directory would
// not be: Helm installs those once and never touches them again.
func previousChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch := loadChart(t)
	for _, f := range ch.Templates {
		if f.Name == "templates/generated-crds.yaml" {
			old := strings.Replace(string(f.Data), "  name: natsclusters.kubenats.io\n", "  labels:\n    "+oldLabel+": old\n  name: natsclusters.kubenats.io\n", 1)
			if old == string(f.Data) {
				t.Fatal("no NatsCluster CRD to mark")
			}
			f.Data = []byte(old)
		}
	}
	return ch
}

// TestInstallUpgradeUninstall installs the chart with Helm's library on a
// real API server, runs the operator as the chart's ServiceAccount with
// the chart's RBAC and admission policies, upgrades (new values, CRDs
// changed) with a NatsCluster in place, and uninstalls: the chart's
// objects go, the CRDs, the NatsCluster and what the operator made for it
// stay, over a window, not at one read.
//
// Careless variants run: hack/genchart without helm.sh/resource-policy:
// keep fails with "CRD consumers.kubenats.io gone after helm uninstall";
// its ClusterRoleBinding guard inverted (`if .Values.watchNamespaces`, so
// the default install binds the manager's role nowhere) fails with "the
// operator, as the chart's ServiceAccount, did not see the cluster within
// a minute". In envtest no garbage collector runs, so the StatefulSet's
// survival only says that Helm did not delete it.
func TestInstallUpgradeUninstall(t *testing.T) {
	cfg, admin := controlPlane(t)
	ctx := context.Background()
	hc := helmConfig(t, cfg, operatorNamespace)

	began := time.Now()
	helmInstall(t, hc, operatorNamespace, previousChart(t), nil)
	t.Logf("helm install: %.1fs", time.Since(began).Seconds())
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := admin.List(ctx, crds); err != nil {
		t.Fatal(err)
	}
	var kubenatsCRDs []string
	for _, crd := range crds.Items {
		if crd.Spec.Group == v1alpha1.GroupVersion.Group {
			kubenatsCRDs = append(kubenatsCRDs, crd.Name)
		}
	}
	if len(kubenatsCRDs) < 7 {
		t.Fatalf("the chart installed %d kubenats CRDs: %v", len(kubenatsCRDs), kubenatsCRDs)
	}
	eventually(t, 30*time.Second, func() error { return established(ctx, admin, kubenatsCRDs) })

	// The operator as the chart installed it: its ServiceAccount, the
	// chart's RBAC, under the chart's admission policies. A permission the
	// chart forgot fails here, not in a user's cluster.
	stopOperator := runOperator(t, cfg)
	checkAccess(t, admin)
	apps := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}}
	if err := admin.Create(ctx, apps); err != nil {
		t.Fatal(err)
	}
	nc := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "nats"}}
	nc.Spec.Replicas = new(int32(3))
	if err := admin.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	sts := &appsv1.StatefulSet{}
	eventually(t, time.Minute, func() error { return admin.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "nats"}, sts) })
	eventually(t, time.Minute, func() error {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(nc), nc); err != nil {
			return err
		}
		if nc.Status.ObservedGeneration != nc.Generation {
			return fmt.Errorf("status not written by the operator: %+v", nc.Status)
		}
		return nil
	})

	began = time.Now()
	helmUpgrade(t, hc, operatorNamespace, loadChart(t), map[string]any{"jetstreamWorkers": 4})
	t.Logf("helm upgrade: %.1fs", time.Since(began).Seconds())
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := admin.Get(ctx, types.NamespacedName{Name: "natsclusters.kubenats.io"}, crd); err != nil {
		t.Fatal(err)
	}
	if _, ok := crd.Labels[oldLabel]; ok {
		t.Error("the upgrade left the previous chart's NatsCluster CRD as it was")
	}
	dep := &appsv1.Deployment{}
	if err := admin.Get(ctx, types.NamespacedName{Namespace: operatorNamespace, Name: "kubenats"}, dep); err != nil {
		t.Fatal(err)
	}
	if a := dep.Spec.Template.Spec.Containers[0].Args; !slices.Contains(a, "--jetstream-workers=4") {
		t.Errorf("the upgraded Deployment's args: %v", a)
	}
	kept := &v1alpha1.NatsCluster{}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(nc), kept); err != nil || kept.UID != nc.UID {
		t.Fatalf("the NatsCluster after the upgrade: %v (uid %s, was %s)", err, kept.UID, nc.UID)
	}

	// helm uninstall removes the operator's Deployment; the operator stops
	// with it.
	if err := stopOperator(); err != nil {
		t.Fatal(err)
	}
	began = time.Now()
	helmUninstall(t, hc)
	t.Logf("helm uninstall: %.1fs", time.Since(began).Seconds())
	for _, obj := range []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: "kubenats"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: "kubenats"}},
	} {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s after helm uninstall: %v", obj, obj.GetName(), err)
		}
	}
	throughout(t, 3*time.Second, func() error {
		for _, name := range kubenatsCRDs {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := admin.Get(ctx, types.NamespacedName{Name: name}, crd); err != nil {
				return fmt.Errorf("CRD %s gone after helm uninstall: %w", name, err)
			}
			if !crd.DeletionTimestamp.IsZero() {
				return fmt.Errorf("CRD %s being deleted after helm uninstall", name)
			}
		}
		left := &v1alpha1.NatsCluster{}
		if err := admin.Get(ctx, client.ObjectKeyFromObject(nc), left); err != nil || left.UID != nc.UID || !left.DeletionTimestamp.IsZero() {
			return fmt.Errorf("the NatsCluster after helm uninstall: %v", err)
		}
		return admin.Get(ctx, client.ObjectKeyFromObject(sts), &appsv1.StatefulSet{})
	})
}

// established: every CRD named is served.
func established(ctx context.Context, c client.Client, names []string) error {
	for _, name := range names {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, types.NamespacedName{Name: name}, crd); err != nil {
			return err
		}
		ok := false
		for _, cond := range crd.Status.Conditions {
			ok = ok || cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue
		}
		if !ok {
			return fmt.Errorf("CRD %s not established", name)
		}
	}
	return nil
}

// runOperator starts the operator in this process as the chart's
// ServiceAccount (rbac.Config impersonates it). An operator whose caches
// cannot sync (RBAC the chart forgot to bind) fails the test within a
// minute instead of hanging it.
func runOperator(t *testing.T, cfg *rest.Config) func() error {
	t.Helper()
	inprocess.SetTestLogger()
	type started struct {
		stop func() error
		err  error
	}
	done := make(chan started, 1)
	go func() {
		stop, err := inprocess.Start(context.Background(), rbac.Config(cfg), manager.Options{MetricsBindAddress: "0", HealthProbeBindAddress: "0"})
		done <- started{stop, err}
	}()
	select {
	case s := <-done:
		if s.err != nil {
			t.Fatalf("the operator as the chart's ServiceAccount: %v", s.err)
		}
		return s.stop
	case <-time.After(time.Minute):
		t.Fatal("the operator, as the chart's ServiceAccount, did not see the cluster within a minute (its caches did not sync: RBAC missing?)")
		return nil
	}
}

// checkAccess asks the API server (SubjectAccessReview) whether the
// chart's ServiceAccount may do what the operator does beyond one
// NatsCluster's reconcile: its leader lease in the release namespace, the
// metrics endpoint's reviews, and no more than that in kube-system.
func checkAccess(t *testing.T, admin client.Client) {
	t.Helper()
	for _, tc := range []struct {
		attrs authorizationv1.ResourceAttributes
		want  bool
	}{
		{authorizationv1.ResourceAttributes{Namespace: operatorNamespace, Group: "coordination.k8s.io", Resource: "leases", Verb: "update"}, true},
		{authorizationv1.ResourceAttributes{Group: "authentication.k8s.io", Resource: "tokenreviews", Verb: "create"}, true},
		{authorizationv1.ResourceAttributes{Namespace: "apps", Group: "kubenats.io", Resource: "streams", Subresource: "status", Verb: "update"}, true},
		{authorizationv1.ResourceAttributes{Namespace: "apps", Group: "apps", Resource: "statefulsets", Verb: "patch"}, true},
		// Least privilege: a lease anywhere else, or RBAC, is not the operator's.
		{authorizationv1.ResourceAttributes{Namespace: "kube-system", Group: "coordination.k8s.io", Resource: "leases", Verb: "update"}, false},
		{authorizationv1.ResourceAttributes{Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Verb: "create"}, false},
	} {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: rbac.User, Groups: rbac.Groups, ResourceAttributes: &tc.attrs,
		}}
		if err := admin.Create(context.Background(), sar); err != nil {
			t.Fatal(err)
		}
		if sar.Status.Allowed != tc.want {
			t.Errorf("%s %s/%s in %q: allowed %v, want %v (%s)", tc.attrs.Verb, tc.attrs.Resource, tc.attrs.Subresource, tc.attrs.Namespace, sar.Status.Allowed, tc.want, sar.Status.Reason)
		}
	}
}
