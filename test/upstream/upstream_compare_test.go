//go:build upstream

package upstream

// The comparisons with upstream's own files: built only with the tag
// `upstream`, which `make test-upstream` (a step of .ci/run, where the
// files are) gives, so that a plain `make test` neither runs nor skips
// them.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// needReal fails the test when the real files are not given: built with
// the tag, a comparison that compares nothing would be a pass for nothing.
func needReal(t *testing.T) {
	t.Helper()
	if !Real() {
		t.Fatalf("%s is unset: make test-upstream gives the directory of the real files", Env)
	}
}

// TestChartReleaseMatchesTheRealRendering (with KUBENATS_UPSTREAM_FIXTURES
// only): the stand-in release is the real chart's rendering in everything
// the tests and the takeover read: the objects and their order, every
// label, the Services' ports, the budget, the StatefulSet's shape, its
// containers' names, images, ports, environment, mounts and probe
// paths, and nats.conf byte for byte. Probe timings and the reloader's
// arguments are the stand-in's own and are not compared. It fails when the
// stand-in drifts from what the chart writes, so that the plain-clone
// tests keep testing against the chart's layout.
func TestChartReleaseMatchesTheRealRendering(t *testing.T) {
	needReal(t)
	ours := readRelease(t, ChartRelease(TheRelease))
	real := readRelease(t, ChartRendering(t))
	same := func(what string, a, b any) {
		t.Helper()
		if !reflect.DeepEqual(a, b) {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			t.Errorf("%s differs:\n  stand-in %s\n  real     %s", what, ja, jb)
		}
	}
	same("objects", ours.order, real.order)
	same("ConfigMap labels", ours.config.Labels, real.config.Labels)
	same("nats.conf", ours.config.Data, real.config.Data)
	for name, s := range real.services {
		if ours.services[name] == nil {
			t.Errorf("no Service %s", name)
			continue
		}
		same("Service "+name, ours.services[name].ObjectMeta, s.ObjectMeta)
		same("Service "+name+" spec", ours.services[name].Spec, s.Spec)
	}
	same("budget", ours.budget, real.budget)
	o, u := ours.sts, real.sts
	same("StatefulSet metadata", o.ObjectMeta, u.ObjectMeta)
	same("claim templates", o.Spec.VolumeClaimTemplates, u.Spec.VolumeClaimTemplates)
	same("pod labels", o.Spec.Template.Labels, u.Spec.Template.Labels)
	oSpec, uSpec := o.Spec.DeepCopy(), u.Spec.DeepCopy()
	oSpec.Template, uSpec.Template = corev1.PodTemplateSpec{}, corev1.PodTemplateSpec{}
	same("StatefulSet spec", oSpec, uSpec)
	op, up := o.Spec.Template.Spec.DeepCopy(), u.Spec.Template.Spec.DeepCopy()
	var names []string
	for i := range up.Containers {
		names = append(names, up.Containers[i].Name)
	}
	if len(op.Containers) != len(up.Containers) {
		t.Fatalf("containers: the real rendering has %v", names)
	}
	for i := range op.Containers {
		oc, uc := &op.Containers[i], &up.Containers[i]
		same("container "+uc.Name+" name and image", [2]string{oc.Name, oc.Image}, [2]string{uc.Name, uc.Image})
		same("container "+uc.Name+" mounts", oc.VolumeMounts, uc.VolumeMounts)
		same("container "+uc.Name+" ports", oc.Ports, uc.Ports)
		same("container "+uc.Name+" env", oc.Env, uc.Env)
		if uc.Name != "nats" {
			continue
		}
		same("nats args", oc.Args, uc.Args)
		for _, p := range [][2]*corev1.Probe{{oc.StartupProbe, uc.StartupProbe}, {oc.ReadinessProbe, uc.ReadinessProbe}, {oc.LivenessProbe, uc.LivenessProbe}} {
			same("probe", p[0].HTTPGet, p[1].HTTPGet)
		}
	}
	op.Containers, up.Containers = nil, nil
	same("pod spec", op, up)
}

// TestNACKStandInsAreNACKsExampleFiles (with KUBENATS_UPSTREAM_FIXTURES
// only): the stand-ins are one per published example, under the same
// names, so that the tests' expectations, keyed by file, hold for both.
func TestNACKStandInsAreNACKsExampleFiles(t *testing.T) {
	needReal(t)
	ours, err := nackExamples.ReadDir("nack")
	if err != nil {
		t.Fatal(err)
	}
	real, err := os.ReadDir(filepath.Join(dir(t), upstreamNACK))
	if err != nil {
		t.Fatal(err)
	}
	names := func(es []os.DirEntry) (out []string) {
		for _, e := range es {
			out = append(out, e.Name())
		}
		return out
	}
	if !slices.Equal(names(ours), names(real)) {
		t.Errorf("stand-ins %v, NACK's examples %v", names(ours), names(real))
	}
}
