package render_test

import (
	"testing"

	"github.com/kubenats/kubenats/internal/render"
)

func TestChildNames(t *testing.T) {
	c := cluster(named("east"))
	for _, tc := range []struct{ what, got, want string }{
		{"client Service", c.ClientServiceName(), "east"},
		{"headless Service", c.HeadlessServiceName(), "east-headless"},
		{"ConfigMap", c.ConfigMapName(), "east-config"},
		{"StatefulSet", c.StatefulSetName(), "east"},
		{"auth Secret", c.AuthSecretName(), "east-auth"},
		{"system Secret", c.SystemSecretName(), "east-system"},
		{"credentials Secret", c.CredentialsSecretName(), "east-client"},
		{"pod 0", render.PodName(c, 0), "east-0"},
		{"pod 12", render.PodName(c, 12), "east-12"},
		{"claim 2", render.ClaimName(c, 2), "data-east-2"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			equal(t, tc.what, tc.got, tc.want)
		})
	}
}

func TestPodOrdinal(t *testing.T) {
	c := cluster(named("east"))
	for _, tc := range []struct {
		pod  string
		want int
		ok   bool
	}{
		{"east-0", 0, true},
		{"east-12", 12, true},
		{"east-headless-1", 0, false}, // another object's name
		{"west-1", 0, false},
		{"east-01", 0, false}, // not a name the StatefulSet gives
		{"east--1", 0, false},
		{"east-", 0, false},
	} {
		got, ok := render.PodOrdinal(c, tc.pod)
		if got != tc.want || ok != tc.ok {
			t.Errorf("PodOrdinal(%q) = %d, %v; want %d, %v", tc.pod, got, ok, tc.want, tc.ok)
		}
	}
}
