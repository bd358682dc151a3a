package v1alpha1

import "testing"

func TestChildNames(t *testing.T) {
	c := &NatsCluster{}
	c.Name, c.Namespace = "east", "apps"
	for _, tc := range []struct{ what, got, want string }{
		{"client Service", c.ClientServiceName(), "east"},
		{"headless Service", c.HeadlessServiceName(), "east-headless"},
		{"ConfigMap", c.ConfigMapName(), "east-config"},
		{"StatefulSet", c.StatefulSetName(), "east"},
		{"auth Secret", c.AuthSecretName(), "east-auth"},
		{"system Secret", c.SystemSecretName(), "east-system"},
		{"credentials Secret", c.CredentialsSecretName(), "east-client"},
		{"pod 0", c.PodName(0), "east-0"},
		{"pod 12", c.PodName(12), "east-12"},
		{"claim 2", c.ClaimName(2), "data-east-2"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.what, tc.got, tc.want)
		}
	}
}

func TestPodOrdinal(t *testing.T) {
	c := &NatsCluster{}
	c.Name, c.Namespace = "east", "apps"
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
		got, ok := c.PodOrdinal(tc.pod)
		if got != tc.want || ok != tc.ok {
			t.Errorf("PodOrdinal(%q) = %d, %v; want %d, %v", tc.pod, got, ok, tc.want, tc.ok)
		}
	}
}
