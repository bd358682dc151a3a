package jetstreamcontroller

import (
	"testing"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestCrossNamespaceRefusalRevealsNoCluster: a resource naming a
// NatsCluster in another namespace that does not let it in gets the same
// refusal (reason, message, gone) whether that cluster exists, is being
// deleted, or was never there: a tenant cannot probe other namespaces for
// clusters. Careless variant caught: today's main looked the cluster up
// first and answered ClusterNotFound "NatsCluster x/y does not exist" for
// a missing one, NotAllowed for one that exists.
func TestCrossNamespaceRefusalRevealsNoCluster(t *testing.T) {
	ref := v1alpha1.ClusterRef{Namespace: "victim", Name: "nats"}
	allowing := func(namespaces ...string) *v1alpha1.NatsCluster {
		c := &v1alpha1.NatsCluster{}
		c.Spec.JetStream.AllowedNamespaces = namespaces
		return c
	}
	var first *targetProblem
	for what, c := range map[string]*v1alpha1.NatsCluster{
		"missing or being deleted":    nil,
		"allowing no one":             allowing(),
		"allowing another namespace":  allowing("friend"),
		"allowing a namespace prefix": allowing("tenant"),
	} {
		p := clusterRefProblem("tenant-a", ref, c)
		if p == nil {
			t.Fatalf("%s: allowed", what)
		}
		if first == nil {
			first = p
		}
		if *p != *first {
			t.Errorf("%s: %+v, differs from %+v", what, *p, *first)
		}
	}
	if first.reason != reasonNotAllowed || !first.gone {
		t.Errorf("refusal %+v, want NotAllowed, gone", *first)
	}

	for what, tc := range map[string]struct {
		ns   string
		ref  v1alpha1.ClusterRef
		c    *v1alpha1.NatsCluster
		want string // reason, "" when allowed
	}{
		"allowed by name":          {"tenant-a", ref, allowing("tenant-a"), ""},
		"allowed by star":          {"tenant-a", ref, allowing("*"), ""},
		"own namespace":            {"victim", ref, allowing(), ""},
		"own namespace, missing":   {"victim", ref, nil, reasonClusterNotFound},
		"allowed by name, missing": {"tenant-a", ref, nil, reasonNotAllowed},
	} {
		p := clusterRefProblem(tc.ns, tc.ref, tc.c)
		switch {
		case tc.want == "" && p != nil:
			t.Errorf("%s: refused: %+v", what, *p)
		case tc.want != "" && (p == nil || p.reason != tc.want):
			t.Errorf("%s: %+v, want reason %s", what, p, tc.want)
		}
	}
}

// TestConnectionAllowed: --connection-allowed-namespaces, empty for
// today's behaviour (every namespace may use spec.connection).
func TestConnectionAllowed(t *testing.T) {
	for _, tc := range []struct {
		allowed []string
		ns      string
		want    bool
	}{
		{nil, "team-a", true},
		{[]string{"team-a"}, "team-a", true},
		{[]string{"team-a"}, "team-b", false},
		{[]string{"team-a", "team-b"}, "team-b", true},
		{[]string{"*"}, "team-a", false}, // no wildcard: a list is a list
	} {
		if got := connectionAllowed(tc.allowed, tc.ns); got != tc.want {
			t.Errorf("connectionAllowed(%v, %q) = %t, want %t", tc.allowed, tc.ns, got, tc.want)
		}
	}
}
