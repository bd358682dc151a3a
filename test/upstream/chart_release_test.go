package upstream

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/internal/manifest"
)

// release is a rendering read back into typed objects.
type release struct {
	order    []string // Kind/name, as rendered
	config   *corev1.ConfigMap
	services map[string]*corev1.Service
	budget   *policyv1.PodDisruptionBudget
	sts      *appsv1.StatefulSet
}

func readRelease(t *testing.T, data []byte) release {
	t.Helper()
	docs, err := manifest.Documents(data)
	if err != nil {
		t.Fatal(err)
	}
	r := release{services: map[string]*corev1.Service{}}
	for _, d := range docs {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(d, &head); err != nil {
			t.Fatal(err)
		}
		var into any
		switch head.Kind {
		case "ConfigMap":
			r.config = &corev1.ConfigMap{}
			into = r.config
		case "Service":
			s := &corev1.Service{}
			r.services[head.Metadata.Name], into = s, s
		case "PodDisruptionBudget":
			r.budget = &policyv1.PodDisruptionBudget{}
			into = r.budget
		case "StatefulSet":
			r.sts = &appsv1.StatefulSet{}
			into = r.sts
		default:
			t.Fatalf("a %s in the rendering", head.Kind)
		}
		if err := yaml.UnmarshalStrict(d, into); err != nil {
			t.Fatalf("%s %s: %v", head.Kind, head.Metadata.Name, err)
		}
		r.order = append(r.order, head.Kind+"/"+head.Metadata.Name)
	}
	return r
}

// TestChartReleaseHasTheChartsLayout: the stand-in release has what the
// chart's documentation says a clustered JetStream release is (names,
// labels, the headless Service publishing not-ready addresses, parallel
// pods, claim template nats-js, routes to every pod by the headless
// Service, nats.conf reading the server name from the environment), for
// a release of another name and size too. Careless variants it catches: a
// renderer that writes "nats" where the release's name belongs (the
// release "orders" then routes to nats-0), and nats.conf values quoted
// ("$SERVER_NAME" in quotes is not expanded by nats-server; a quoted size
// is not a size).
func TestChartReleaseHasTheChartsLayout(t *testing.T) {
	for _, c := range []Chart{TheRelease, {Release: "orders", Replicas: 5, FileStore: "10Gi"}} {
		t.Run(c.Release, func(t *testing.T) {
			r := readRelease(t, ChartRelease(c))
			want := []string{"ConfigMap/" + c.Release + "-config", "Service/" + c.Release + "-headless",
				"PodDisruptionBudget/" + c.Release, "Service/" + c.Release, "StatefulSet/" + c.Release}
			if !slices.Equal(r.order, want) {
				t.Fatalf("objects %v, want %v", r.order, want)
			}
			selector := map[string]string{"app.kubernetes.io/name": "nats", "app.kubernetes.io/instance": c.Release, "app.kubernetes.io/component": "nats"}
			for _, labels := range []map[string]string{r.config.Labels, r.services[c.Release].Labels, r.sts.Labels, r.sts.Spec.Template.Labels, r.budget.Labels} {
				if labels["helm.sh/chart"] != "nats-"+ChartVersion || labels["app.kubernetes.io/managed-by"] != "Helm" {
					t.Errorf("labels %v are not the chart's", labels)
				}
				for k, v := range selector {
					if labels[k] != v {
						t.Errorf("labels %v: %s is not %s", labels, k, v)
					}
				}
			}
			h := r.services[c.Release+"-headless"]
			s := r.sts.Spec
			switch {
			case h.Spec.ClusterIP != "None" || !h.Spec.PublishNotReadyAddresses:
				t.Errorf("headless Service %+v", h.Spec)
			case s.ServiceName != c.Release+"-headless" || s.PodManagementPolicy != appsv1.ParallelPodManagement || *s.Replicas != c.Replicas:
				t.Errorf("StatefulSet %s, %s, %d replicas", s.ServiceName, s.PodManagementPolicy, *s.Replicas)
			case !reflect.DeepEqual(s.Selector.MatchLabels, selector) || !reflect.DeepEqual(r.budget.Spec.Selector.MatchLabels, selector):
				t.Errorf("selectors %v, %v", s.Selector.MatchLabels, r.budget.Spec.Selector.MatchLabels)
			case len(s.VolumeClaimTemplates) != 1 || s.VolumeClaimTemplates[0].Name != "nats-js" ||
				s.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String() != c.FileStore:
				t.Errorf("claim templates %+v", s.VolumeClaimTemplates)
			}
			conf := r.config.Data["nats.conf"]
			for _, line := range []string{`"server_name": $SERVER_NAME`, `"max_file_store": ` + c.FileStore + `,`, `"name": "` + c.Release + `"`,
				fmt.Sprintf(`"nats://%s-%d.%s-headless:6222"`, c.Release, c.Replicas-1, c.Release)} {
				if !strings.Contains(conf, line) {
					t.Errorf("nats.conf has no %s:\n%s", line, conf)
				}
			}
			if strings.Count(conf, "nats://") != int(c.Replicas) {
				t.Errorf("nats.conf routes to %d servers, want %d", strings.Count(conf, "nats://"), c.Replicas)
			}
		})
	}
}

// TestEditRefusesWhatIsNotThere: an edit of text that is not in the
// release fails the test instead of leaving the release as it was.
func TestEditRefusesWhatIsNotThere(t *testing.T) {
	if got := Edit(t, "a b c", "b", "x"); got != "a x c" {
		t.Fatalf("Edit: %q", got)
	}
	ft := &fatalRecorder{TB: t}
	func() {
		defer func() { _ = recover() }()
		Edit(ft, "a b c", "z", "x")
	}()
	if !ft.failed {
		t.Error("an edit that found nothing passed")
	}
}

type fatalRecorder struct {
	testing.TB
	failed bool
}

func (f *fatalRecorder) Helper() {}
func (f *fatalRecorder) Fatalf(string, ...any) {
	f.failed = true
	panic("fatal")
}
