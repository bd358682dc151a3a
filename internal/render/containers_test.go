package render_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

func TestServerContainerImage(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
		want string
	}{
		{"default version", cluster(), "nats:2.15.3-alpine"},
		{"spec.version", cluster(withVersion("2.16.1")), "nats:2.16.1-alpine"},
		{"spec.version with a pre-release", cluster(withVersion("2.16.0-rc.2")), "nats:2.16.0-rc.2-alpine"},
		{"spec.image overrides", cluster(withVersion("2.16.1"), withImage("registry.example/mirror/nats:2.16.1")), "registry.example/mirror/nats:2.16.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctr := serverContainerOf(t, tc.in)
			equal(t, "image", ctr.Image, tc.want)
			equal(t, "ServerImage", tc.in.WithDefaults().ServerImage(), tc.want)
		})
	}
}

// TestServerContainerRunsTheRenderedConfig checks the command line.
func TestServerContainerRunsTheRenderedConfig(t *testing.T) {
	ctr := serverContainerOf(t, cluster())
	equal(t, "command and args", strings.Join(append(ctr.Command, ctr.Args...), " "), "nats-server --config "+render.ConfigFile)
}

// TestServerContainerPorts checks the names the probes and Services use.
func TestServerContainerPorts(t *testing.T) {
	ctr := serverContainerOf(t, cluster())
	got := map[string]int32{}
	for _, p := range ctr.Ports {
		got[p.Name] = p.ContainerPort
		equal(t, p.Name+" protocol", p.Protocol, corev1.ProtocolTCP)
	}
	equal(t, "ports", fmt.Sprint(got), fmt.Sprint(map[string]int32{"nats": 4222, "cluster": 6222, "monitor": 8222}))
}

func TestServerContainerProbes(t *testing.T) {
	ctr := serverContainerOf(t, cluster())
	monitorPort := map[string]int32{}
	for _, p := range ctr.Ports {
		monitorPort[p.Name] = p.ContainerPort
	}
	for _, tc := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{
		{"startup", ctr.StartupProbe, "/healthz"},
		{"readiness", ctr.ReadinessProbe, "/healthz?js-server-only=true"},
		{"liveness", ctr.LivenessProbe, "/healthz?js-enabled-only=true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.probe == nil || tc.probe.HTTPGet == nil {
				t.Fatalf("no HTTP %s probe: %+v", tc.name, tc.probe)
			}
			get := tc.probe.HTTPGet
			equal(t, "path", get.Path, tc.path)
			equal(t, "scheme", get.Scheme, corev1.URISchemeHTTP)
			port := get.Port.IntVal
			if get.Port.Type == intstr.String {
				port = monitorPort[get.Port.StrVal]
			}
			equal(t, "port", port, int32(render.MonitorPort))
			if tc.probe.TimeoutSeconds < 1 || tc.probe.PeriodSeconds < 1 || tc.probe.FailureThreshold < 1 {
				t.Errorf("probe timings %+v are not all positive", tc.probe)
			}
		})
	}
	t.Run("startup looks at once", func(t *testing.T) {
		equal(t, "startup initialDelaySeconds", ctr.StartupProbe.InitialDelaySeconds, int32(0))
	})
	t.Run("startup allows a slow JetStream recovery", func(t *testing.T) {
		p := ctr.StartupProbe
		if total := p.PeriodSeconds * p.FailureThreshold; total < 300 {
			t.Errorf("startup probe gives up after %d s, want at least 5 minutes", total)
		}
	})
}

func TestServerContainerLameDuckPreStop(t *testing.T) {
	ctr := serverContainerOf(t, cluster())
	if ctr.Lifecycle == nil || ctr.Lifecycle.PreStop == nil || ctr.Lifecycle.PreStop.Exec == nil {
		t.Fatalf("no preStop exec hook: %+v", ctr.Lifecycle)
	}
	equal(t, "preStop", strings.Join(ctr.Lifecycle.PreStop.Exec.Command, " "), "nats-server --signal ldm="+render.PidFile)
	// The pid file must be somewhere the server can write: a mounted volume,
	// since the root filesystem is read-only.
	mounted := false
	for _, m := range ctr.VolumeMounts {
		if strings.HasPrefix(render.PidFile, m.MountPath+"/") && !m.ReadOnly {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("no writable mount holds the pid file %s: %+v", render.PidFile, ctr.VolumeMounts)
	}
}

func TestGoMemLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    *v1alpha1.NatsCluster
		limit string // "" means GOMEMLIMIT absent
	}{
		{"default resources", cluster(), "512Mi"},
		{"user limit", cluster(withResources(corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
		})), "2Gi"},
		{"decimal limit", cluster(withResources(corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("3G")},
		})), "3G"},
		{"requests only", cluster(withResources(corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
		})), ""},
		{"cpu limit only", cluster(withResources(corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		})), ""},
		{"empty resources", cluster(withResources(corev1.ResourceRequirements{})), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, ok := envVar(serverContainerOf(t, tc.in), "GOMEMLIMIT")
			if tc.limit == "" {
				if ok {
					t.Errorf("GOMEMLIMIT = %q, want none without a memory limit", env.Value)
				}
				return
			}
			if !ok {
				t.Fatal("no GOMEMLIMIT")
			}
			got, err := strconv.ParseInt(env.Value, 10, 64)
			if err != nil {
				t.Fatalf("GOMEMLIMIT %q is not a byte count: %v", env.Value, err)
			}
			limit := resource.MustParse(tc.limit)
			want := limit.Value() * 8 / 10
			if diff := got - want; diff < -8 || diff > 8 {
				t.Errorf("GOMEMLIMIT = %d, want 80%% of %s = %d", got, tc.limit, want)
			}
		})
	}
}

func TestContainerResources(t *testing.T) {
	t.Run("defaults: requests and limits on every container, memory request = limit", func(t *testing.T) {
		for _, ctr := range allContainers(podSpecOf(t, cluster())) {
			r := ctr.Resources
			if r.Requests.Cpu().IsZero() || r.Requests.Memory().IsZero() || r.Limits.Memory().IsZero() {
				t.Errorf("container %s resources %+v: want cpu and memory requests and a memory limit", ctr.Name, r)
			}
			if r.Requests.Memory().Cmp(*r.Limits.Memory()) != 0 {
				t.Errorf("container %s memory request %s != limit %s", ctr.Name, r.Requests.Memory(), r.Limits.Memory())
			}
		}
	})
	t.Run("user resources honoured on the server", func(t *testing.T) {
		user := corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("4Gi")},
		}
		spec := podSpecOf(t, cluster(withResources(user)))
		server := containerNamed(t, spec, render.ServerContainerName)
		if !equalResources(server.Resources, user) {
			t.Errorf("server resources = %+v, want %+v", server.Resources, user)
		}
	})
}

// equalResources compares quantities by value.
func equalResources(a, b corev1.ResourceRequirements) bool {
	same := func(x, y corev1.ResourceList) bool {
		if len(x) != len(y) {
			return false
		}
		for k, q := range x {
			if other, ok := y[k]; !ok || q.Cmp(other) != 0 {
				return false
			}
		}
		return true
	}
	return same(a.Requests, b.Requests) && same(a.Limits, b.Limits)
}

// TestServerEnvServerName checks SERVER_NAME is the pod name, quoted for
// nats-server's lexer, and defined after the variable it expands.
func TestServerEnvServerName(t *testing.T) {
	ctr := serverContainerOf(t, cluster())
	env, _ := podEnvironment(t, ctr, "1-a-0")
	equal(t, "SERVER_NAME in the pod", env[render.EnvServerName], `"1-a-0"`)
}
