package render_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// busyCluster sets as many fields as possible, maps with several keys
// included, so that map order would show if it leaked into the output.
func busyCluster() *v1alpha1.NatsCluster {
	return cluster(
		withReplicas(5), withDomain("hub"), withMemoryStore("1Gi"), withFileStoreSize("20Gi"),
		withStorageClass("ssd"), withPVCRetention(v1alpha1.PVCDelete), withAuthUser("app"),
		withConfig("max_payload", "2097152"), withConfig("debug", "true"), withConfig("max_pending", "67108864"),
		withConfig("server_metadata", `{"team": "payments", "tier": "gold", "zone": "a", "cost": "x"}`),
		withConfig("server_tags", `["a:1", "b:2", "c:3"]`),
		withService(v1alpha1.ServiceSpec{Type: "LoadBalancer", Annotations: map[string]string{"a": "1", "b": "2", "c": "3"}}),
		withPodTemplate(v1alpha1.PodTemplateSpec{
			Labels:       map[string]string{"x": "1", "y": "2", "z": "3"},
			Annotations:  map[string]string{"p": "1", "q": "2", "r": "3"},
			NodeSelector: map[string]string{"n1": "a", "n2": "b"},
			Tolerations:  []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
		}),
	)
}

func TestObjectsIsDeterministic(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
	}{
		{"defaults", cluster()},
		{"busy", busyCluster()},
		{"token, JetStream off", cluster(withAuthMode(v1alpha1.AuthToken), withJetStream(false))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := render.Inputs{CredentialsHash: "h"}
			first := renderObjects(t, tc.in, in)
			for i := range 20 {
				again := renderObjects(t, tc.in, in)
				if !reflect.DeepEqual(first, again) {
					t.Fatalf("rendering %d differs from the first", i+2)
				}
			}
		})
	}
}

func TestObjectsDoesNotModifyItsInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
	}{
		{"nothing set: defaults are not written back", cluster()},
		{"busy", busyCluster()},
		{"secretRef without key", cluster(withAuthSecret("mine", ""))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.in.DeepCopy()
			objs := renderObjects(t, tc.in, render.Inputs{})
			if !equality.Semantic.DeepEqual(before, tc.in) {
				t.Fatalf("Objects changed its input:\nbefore %+v\nafter  %+v", before.Spec, tc.in.Spec)
			}
			// Nor do the objects share memory with it: changing them leaves the
			// input alone.
			sts := find[*appsv1.StatefulSet](t, objs, tc.in.Name)
			for k := range sts.Spec.Template.Labels {
				sts.Spec.Template.Labels[k] = "mutated"
			}
			for k := range sts.Spec.Template.Annotations {
				sts.Spec.Template.Annotations[k] = "mutated"
			}
			for i := range sts.Spec.Template.Spec.Tolerations {
				sts.Spec.Template.Spec.Tolerations[i].Key = "mutated"
			}
			for k := range sts.Spec.Template.Spec.NodeSelector {
				sts.Spec.Template.Spec.NodeSelector[k] = "mutated"
			}
			svc := find[*corev1.Service](t, objs, tc.in.Name)
			for k := range svc.Annotations {
				svc.Annotations[k] = "mutated"
			}
			if !equality.Semantic.DeepEqual(before, tc.in) {
				t.Errorf("the rendered objects share memory with the input")
			}
		})
	}
}

// TestObjectsOrder: what the pods mount and run as exists before the pods.
func TestObjectsOrder(t *testing.T) {
	objs := renderObjects(t, cluster(), render.Inputs{})
	index := map[string]int{}
	for i, o := range objs {
		index[fmt.Sprintf("%T", o)] = i
	}
	sts, ok := index["*v1.StatefulSet"]
	if !ok {
		t.Fatal("no StatefulSet")
	}
	for _, before := range []string{"*v1.ConfigMap", "*v1.ServiceAccount"} {
		i, ok := index[before]
		if !ok || i > sts {
			t.Errorf("%s at %d (present %v), want before the StatefulSet at %d", before, i, ok, sts)
		}
	}
}

func TestObjectsKinds(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
	}{
		{"defaults", cluster()},
		{"JetStream off, no auth", cluster(withJetStream(false), withAuthMode(v1alpha1.AuthNone))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := renderObjects(t, tc.in, render.Inputs{})
			for _, c := range []struct {
				kind      string
				got, want int
			}{
				{"ServiceAccount", count[*corev1.ServiceAccount](objs), 1},
				{"ConfigMap", count[*corev1.ConfigMap](objs), 1},
				{"Service", count[*corev1.Service](objs), 2},
				{"StatefulSet", count[*appsv1.StatefulSet](objs), 1},
				{"PodDisruptionBudget", count[*policyv1.PodDisruptionBudget](objs), 1},
				{"Secret (the controller makes those)", count[*corev1.Secret](objs), 0},
				{"NetworkPolicy (the monitoring ports')", count[*networkingv1.NetworkPolicy](objs), 1},
				{"all", len(objs), 7},
			} {
				equal(t, c.kind, c.got, c.want)
			}
		})
	}
}

// children are every object render makes for c: Objects and Secrets.
func children(t *testing.T, c *v1alpha1.NatsCluster) []client.Object {
	t.Helper()
	objs := renderObjects(t, c, render.Inputs{})
	for _, s := range render.Secrets(c.WithDefaults(), render.Credentials{Client: "c", System: "s"}) {
		objs = append(objs, s)
	}
	return objs
}

// TestChildrenOfTwoClustersDoNotCollide: several clusters share a namespace.
func TestChildrenOfTwoClustersDoNotCollide(t *testing.T) {
	for _, mode := range []v1alpha1.AuthMode{v1alpha1.AuthUsers, v1alpha1.AuthToken, v1alpha1.AuthNone} {
		t.Run(string(mode), func(t *testing.T) {
			seen := map[string]string{}
			for _, name := range []string{"a", "b"} {
				for _, o := range children(t, cluster(named(name), withAuthMode(mode))) {
					key := fmt.Sprintf("%s/%s", o.GetObjectKind().GroupVersionKind().Kind, o.GetName())
					if owner, dup := seen[key]; dup {
						t.Errorf("%s is made by both %s and %s", key, owner, name)
					}
					seen[key] = name
					if o.GetName() != name && !strings.HasPrefix(o.GetName(), name+"-") {
						t.Errorf("%s of cluster %s is not named after it", key, name)
					}
				}
			}
		})
	}
}

// TestChildrenLabelsAndNamespace: every child carries the app.kubernetes.io
// labels the operator's caches select on, and lives beside its cluster.
func TestChildrenLabelsAndNamespace(t *testing.T) {
	for _, tc := range []struct {
		name, namespace string
	}{
		{"demo", "ns"},
		{"other-name", "elsewhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cluster(named(tc.name), func(c *v1alpha1.NatsCluster) { c.Namespace = tc.namespace })
			want := map[string]string{
				render.LabelName:      "nats",
				render.LabelInstance:  tc.name,
				render.LabelComponent: "server",
				render.LabelManagedBy: "kubenats",
			}
			for _, o := range children(t, c) {
				gvk := o.GetObjectKind().GroupVersionKind()
				what := fmt.Sprintf("%s %s", gvk.Kind, o.GetName())
				if gvk.Kind == "" || gvk.Version == "" {
					t.Errorf("%T %s has no apiVersion/kind", o, o.GetName())
				}
				equal(t, what+" namespace", o.GetNamespace(), tc.namespace)
				for k, v := range want {
					equal(t, what+" label "+k, o.GetLabels()[k], v)
				}
			}
		})
	}
}

// TestObjectsRefusesConfigKeysOffTheAllowList: a key off the passthrough
// allow-list (owned by the operator, taking a path, opening a listener or
// changing who may connect), smuggled past admission into spec.config, is an
// error naming the key (the controller's ConfigInvalid), never a panic, a
// file read or a second copy in nats.conf.
func TestObjectsRefusesConfigKeysOffTheAllowList(t *testing.T) {
	for _, tc := range []struct {
		key, value string
	}{
		{"operator", `"/dev/zero"`},
		{"include", `"/dev/zero"`},
		{"resolver", `{"type": "full", "dir": "/dev/zero"}`},
		{"log_file", `"/dev/zero"`},
		{"pid_file", `"/tmp/x.pid"`},
		{"ports_file_dir", `"/tmp"`},
		{"prof_port", "6060"},
		{"leafnodes", `{"port": 7422}`},
		{"gateway", `{"name": "x", "port": 7222}`},
		{"websocket", `{"port": 8443, "no_tls": true}`},
		{"mqtt", `{"port": 1883}`},
		{"no_auth_user", `"kubenats-system"`},
		{"No_Auth_User", `"kubenats-system"`},
		{"system_account", `"APP"`},
		{"port", "4223"},
		{"PORT", "4223"},
		{"server_name", `"x"`},
		{"jetstream", `{"store_dir": "/tmp"}`},
		{"cluster", `{"port": 7000}`},
		{"authorization", `{"token": "x"}`},
		{"accounts", `{}`},
		{"system_account", `"X"`},
		{"store_dir", `"/tmp"`},
		{"http", `"0.0.0.0:9000"`},
		{"listen", `"0.0.0.0:4000"`},
		{"lame_duck_duration", `"1s"`},
	} {
		t.Run(tc.key, func(t *testing.T) {
			objs, err := objectsNoPanic(t, cluster(withConfig(tc.key, tc.value)))
			if err == nil {
				t.Fatalf("Objects accepted config key %q", tc.key)
			}
			if !strings.Contains(err.Error(), tc.key) {
				t.Errorf("error %q does not name the key %q", err, tc.key)
			}
			if objs != nil {
				t.Errorf("Objects returned %d objects with its error", len(objs))
			}
		})
	}
}

// TestObjectsRefusesConfigWithoutNatsConfForm: values nats.conf cannot spell
// are errors naming the key.
func TestObjectsRefusesConfigWithoutNatsConfForm(t *testing.T) {
	for _, tc := range []struct {
		name, key, value string
	}{
		{"null", "max_payload", "null"},
		{"malformed JSON", "max_payload", "{"},
		{"null inside a map", "server_metadata", `{"team": null}`},
		{"control character in a string", "ping_interval", `"a\u0001b"`},
		{"trailing data", "max_payload", "1 2"},
		{"trailing brace", "max_payload", "1 }"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := objectsNoPanic(t, cluster(withConfig(tc.key, tc.value)))
			if err == nil {
				t.Fatalf("Objects accepted %s = %s", tc.key, tc.value)
			}
			if !strings.Contains(err.Error(), tc.key) {
				t.Errorf("error %q does not name the key %q", err, tc.key)
			}
		})
	}
}

func objectsNoPanic(t *testing.T, c *v1alpha1.NatsCluster) (objs []client.Object, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Objects panicked: %v", r)
		}
	}()
	return render.Objects(c, render.Inputs{})
}

// TestObjectsDefaultsLikeTheAPIServer: rendering the object as the API
// server stores it (defaults filled in) gives the same objects.
func TestObjectsDefaultsLikeTheAPIServer(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
	}{
		{"nothing set", cluster()},
		{"token", cluster(withAuthMode(v1alpha1.AuthToken))},
		{"secretRef without key", cluster(withAuthSecret("mine", ""))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := renderObjects(t, tc.in, render.Inputs{})
			defaulted := renderObjects(t, tc.in.WithDefaults(), render.Inputs{})
			if !equality.Semantic.DeepEqual(raw, defaulted) {
				t.Errorf("rendering differs between the object as written and as defaulted")
			}
		})
	}
}

// TestObjectsMetadataOnlyNameNamespaceLabels: render sets no fields the API
// server owns.
func TestObjectsMetadataOnlyNameNamespaceLabels(t *testing.T) {
	c := cluster(func(c *v1alpha1.NatsCluster) {
		c.UID = "1234"
		c.ResourceVersion = "99"
		c.Generation = 7
		c.CreationTimestamp = metav1.Now()
	})
	for _, o := range children(t, c) {
		if o.GetUID() != "" || o.GetResourceVersion() != "" || o.GetGeneration() != 0 || !o.GetCreationTimestamp().Time.IsZero() || len(o.GetOwnerReferences()) != 0 {
			t.Errorf("%T %s carries server-owned metadata or owner references", o, o.GetName())
		}
	}
}
