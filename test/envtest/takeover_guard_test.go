package envtest_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/manifest"
)

// chartExtras are the release's two Services and one of its pods, as the
// chart labels them: a takeover labels the pods first.
const chartExtras = `apiVersion: v1
kind: Service
metadata:
  name: nats
  labels: {app.kubernetes.io/component: nats, app.kubernetes.io/instance: nats, app.kubernetes.io/name: nats, helm.sh/chart: nats-1.2.6}
spec:
  selector: {app.kubernetes.io/component: nats, app.kubernetes.io/instance: nats, app.kubernetes.io/name: nats}
  ports: [{name: nats, port: 4222}]
---
apiVersion: v1
kind: Service
metadata:
  name: nats-headless
  labels: {app.kubernetes.io/component: nats, app.kubernetes.io/instance: nats, app.kubernetes.io/name: nats, helm.sh/chart: nats-1.2.6}
spec:
  clusterIP: None
  selector: {app.kubernetes.io/component: nats, app.kubernetes.io/instance: nats, app.kubernetes.io/name: nats}
  ports: [{name: nats, port: 4222}]
---
apiVersion: v1
kind: Pod
metadata:
  name: nats-0
  labels: {app.kubernetes.io/component: nats, app.kubernetes.io/instance: nats, app.kubernetes.io/name: nats}
spec:
  containers: [{name: nats, image: "nats:2.10.22"}]
`

// applyMinimalRelease creates in ns the release "nats" of
// internal/convert/testdata/chart-minimal.yaml, with natsConf as its
// nats.conf, its two Services and a pod; it returns the objects as
// created.
func applyMinimalRelease(t *testing.T, ns, natsConf string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile("../../internal/convert/testdata/chart-minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var block strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(natsConf, "\n"), "\n") {
		block.WriteString("    " + line + "\n")
	}
	text := strings.Replace(string(data), "NATS_CONF\n", block.String(), 1)
	text = strings.Replace(text, "CONTAINER_ENV\n", "", 1) + "---\n" + chartExtras
	docs, err := manifest.Documents([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, d := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(d, &u.Object); err != nil {
			t.Fatal(err)
		}
		u.SetNamespace(ns)
		create(t, u)
		objs = append(objs, u)
	}
	return objs
}

// releaseConf is the chart's nats.conf, cut to what kubenats carries.
const releaseConf = `server_name: $SERVER_NAME
port: 4222
http_port: 8222
pid_file: /var/run/nats/nats.pid
jetstream {
  max_file_store: 1Gi
  store_dir: /data
}
`

func takingOver(s *v1alpha1.NatsClusterSpec) {
	s.Takeover = &v1alpha1.TakeoverSpec{HelmRelease: "nats"}
	s.Auth.Mode = v1alpha1.AuthNone
}

// TestTakeoverNeedsTheRightsToDismantleTheRelease: a NatsCluster that takes
// over a release of the official chart is admitted only for a requester
// the API server's authorizer lets delete the release's StatefulSet and
// update both its Services (the operator does it with its own rights),
// and a refused one names the right it lacks; the release is not touched
// over a window. A requester whose rights are limited to the release's
// names is enough. An edit that leaves spec.takeover as it was is not
// asked again. Careless variants: no policy (watched: the tenant who may
// only create NatsClusters is admitted, and the operator sets about the
// release, labelling its pod as kubenats'), a policy that asks for the
// StatefulSet alone (the deleter is admitted), and one that asks on every
// update (the tenant cannot scale a cluster its owner made).
func TestTakeoverNeedsTheRightsToDismantleTheRelease(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	release := applyMinimalRelease(t, ns, releaseConf)
	clusters := rbacv1.PolicyRule{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"natsclusters"}, Verbs: []string{"create", "get", "update"}}
	deleteStatefulSet := rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"delete"}}
	updateServices := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"update"}}
	byName := func(r rbacv1.PolicyRule, names ...string) rbacv1.PolicyRule { r.ResourceNames = names; return r }

	tenant := actingAs(t, ns, "tenant", clusters)
	deleter := actingAs(t, ns, "deleter", clusters, deleteStatefulSet)
	updater := actingAs(t, ns, "updater", clusters, updateServices)
	halfNamed := actingAs(t, ns, "half-named", clusters, deleteStatefulSet, byName(updateServices, "nats"))
	for _, tc := range []struct {
		who     string
		as      client.Client
		missing string
	}{
		{"tenant", tenant, "delete the StatefulSet nats in namespace " + ns},
		{"deleter", deleter, "update the Services nats and nats-headless in namespace " + ns},
		{"updater", updater, "delete the StatefulSet nats in namespace " + ns},
		{"half-named", halfNamed, "update the Services nats and nats-headless in namespace " + ns},
	} {
		err := tc.as.Create(ctx(t), natsCluster(ns, "nats", takingOver))
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "spec.takeover") || !strings.Contains(err.Error(), tc.missing) {
			t.Errorf("%s taking over: %v, want forbidden naming %q", tc.who, err, tc.missing)
		}
	}
	chartUnchanged(t, release, 3*time.Second)

	// The release's owner, with rights to its names alone, is admitted.
	// Another name than the release's: this cluster finds no StatefulSet
	// to take over, and touches nothing either.
	owned := func(s *v1alpha1.NatsClusterSpec) { takingOver(s); s.Takeover.HelmRelease = "owned" }
	owner := actingAs(t, ns, "owner", clusters, byName(deleteStatefulSet, "owned"), byName(updateServices, "owned", "owned-headless"))
	if err := owner.Create(ctx(t), natsCluster(ns, "owned", owned)); err != nil {
		t.Fatalf("the release's owner taking over: %v, want admitted", err)
	}
	key := client.ObjectKey{Namespace: ns, Name: "owned"}
	if err := updateAs(t, tenant, key, func(s *v1alpha1.NatsClusterSpec) { s.Replicas = ptr.To[int32](5) }); err != nil {
		t.Errorf("the tenant scaling a cluster its owner took over with: %v, want admitted", err)
	}
}

// TestTakeoverOfAHostileConfigIsRefused: the release's ConfigMap, which
// whoever may write ConfigMaps in the namespace writes, holds what
// crashed the operator or copied its environment: a nats.conf whose
// variables expand to 16^10 values, and one that refers to a variable of
// the operator's own environment (the operator runs in this process).
// The takeover is refused (TakeoverRefused) naming the limit or the
// reference, never the environment's value, the operator keeps
// answering, and the release is not touched. Careless variants: the
// parser's fallback to the environment (watched: no refusal, the value
// carried and the takeover under way); the unmeasured tree is the unit
// test's (TestVariableBombRefusedInABoundedChild), not run here where it
// would take the machine's memory.
//
// Not parallel: t.Setenv sets the environment of the whole process, the
// operator's (its two cases run in parallel with each other).
func TestTakeoverOfAHostileConfigIsRefused(t *testing.T) {
	const secret = "operator-environment-value"
	t.Setenv("KUBENATS_TAKEOVER_LEAK", secret)
	sixteenfold := "z0: [x" + strings.Repeat(", x", 15) + "]\n"
	for i := 1; i < 10; i++ {
		ref := fmt.Sprintf("$z%d", i-1)
		sixteenfold += fmt.Sprintf("z%d: [%s%s]\n", i, ref, strings.Repeat(", "+ref, 15))
	}
	sixteenfold += "server_tags: $z9\n"
	for _, tc := range []struct {
		name, conf, want string
	}{
		{"bomb", releaseConf + sixteenfold, "more than 20000 values"},
		{"environment", releaseConf + "write_deadline: $KUBENATS_TAKEOVER_LEAK\n", "nats.conf write_deadline refers to $KUBENATS_TAKEOVER_LEAK,"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			release := applyMinimalRelease(t, ns, tc.conf)
			c := natsCluster(ns, "nats", takingOver)
			create(t, c)
			readyCondition(t, c, metav1.ConditionFalse, "TakeoverRefused")
			_, _, msg := readyMessage(t, c)
			if !strings.Contains(msg, tc.want) {
				t.Errorf("the refusal %q does not name %q", msg, tc.want)
			}
			status, _ := yaml.Marshal(c.Status)
			if strings.Contains(string(status), secret) {
				t.Errorf("the operator's environment is in the status:\n%s", status)
			}
			chartUnchanged(t, release, 3*time.Second)
		})
	}
}
