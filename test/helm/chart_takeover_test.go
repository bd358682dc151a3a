package helm

import (
	"context"
	"errors"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/test/upstream"
)

// TestForgottenReleaseIsNotUninstalled holds docs/migration.md's word on
// what a user does with the official chart's Helm release once kubenats
// took it over: delete Helm's record of it, never `helm uninstall` it.
// The release is installed with Helm's library from the chart's rendering
// (package upstream: the project's chart-shaped stand-in, or the real
// rendering when KUBENATS_UPSTREAM_FIXTURES names it); a takeover leaves objects of the same names (the
// StatefulSet, Services, ConfigMap, budget) owned by the NatsCluster, and
// Helm deletes by the names it stored. After the record is deleted as the
// documentation says, `helm uninstall` finds no release and every object
// stays over a window. The careless variant runs too: uninstalled with
// its record in place, the StatefulSet of the release's name is deleted.
func TestForgottenReleaseIsNotUninstalled(t *testing.T) {
	cfg, admin := controlPlane(t)
	for _, forget := range []bool{false, true} {
		ns := "chart-forget"
		if !forget {
			ns = "chart-uninstall"
		}
		hc := helmConfig(t, cfg, ns)
		i := action.NewInstall(hc)
		i.ReleaseName, i.Namespace, i.CreateNamespace = "nats", ns, true
		i.WaitStrategy, i.Timeout = kube.HookOnlyStrategy, time.Minute
		if _, err := i.RunWithContext(context.Background(), renderedChart(t), nil); err != nil {
			t.Fatalf("helm install: %v", err)
		}
		sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nats"}}
		if err := admin.Get(context.Background(), client.ObjectKeyFromObject(sts), sts); err != nil {
			t.Fatal(err)
		}
		if forget {
			// kubectl delete secret -n <ns> -l owner=helm,name=<release>
			if err := admin.DeleteAllOf(context.Background(), &corev1.Secret{}, client.InNamespace(ns),
				client.MatchingLabels{"owner": "helm", "name": "nats"}); err != nil {
				t.Fatal(err)
			}
		}
		u := action.NewUninstall(hc)
		u.WaitStrategy, u.Timeout = kube.HookOnlyStrategy, time.Minute
		_, err := u.Run("nats")
		gone := func() bool {
			now := &appsv1.StatefulSet{}
			return admin.Get(context.Background(), client.ObjectKeyFromObject(sts), now) != nil || !now.DeletionTimestamp.IsZero() || now.UID != sts.UID
		}
		if !forget {
			if err != nil || !gone() {
				t.Fatalf("helm uninstall with the record in place: %v, StatefulSet gone %v; want it deleted (the variant the documentation warns of)", err, gone())
			}
			continue
		}
		if err == nil {
			t.Fatal("helm uninstall of a forgotten release succeeded")
		}
		throughout(t, 2*time.Second, func() error {
			if gone() {
				return errors.New("the StatefulSet was deleted by helm uninstall of a forgotten release")
			}
			return nil
		})
		t.Logf("helm uninstall of the forgotten release: %v; nothing deleted", err)
	}
}

// renderedChart is a chart whose one template is the official chart's
// rendering: installed, it makes the release the rendering shows, with
// Helm's record of it.
func renderedChart(t *testing.T) *chart.Chart {
	t.Helper()
	return &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "nats", Version: upstream.ChartVersion},
		Templates: []*common.File{{Name: "templates/release.yaml", Data: upstream.ChartRendering(t)}},
	}
}
