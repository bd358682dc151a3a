package controller

import (
	"testing"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestIssuerPolicyListsClusterIssuersByGroupAndName: a listed name is
// cert-manager.io's ClusterIssuer of that name and no other group's; an
// Issuer is always allowed; an empty list given allows no ClusterIssuer,
// while no list allows every one. Careless variants caught: matching the
// name alone (an external issuer group's ClusterIssuer of a listed name
// passes), and treating a given empty list as no policy.
func TestIssuerPolicyListsClusterIssuersByGroupAndName(t *testing.T) {
	cluster := func(name, group string) v1alpha1.IssuerRef {
		return v1alpha1.IssuerRef{Name: name, Kind: "ClusterIssuer", Group: group}
	}
	for _, tc := range []struct {
		policy *[]string
		ref    v1alpha1.IssuerRef
		want   bool
	}{
		{nil, cluster("anything", ""), true},
		{&[]string{}, cluster("anything", ""), false},
		{&[]string{}, v1alpha1.IssuerRef{Name: "own", Kind: "Issuer"}, true},
		{&[]string{"platform"}, cluster("platform", ""), true},
		{&[]string{"platform"}, cluster("platform", "cert-manager.io"), true},
		{&[]string{"platform"}, cluster("platform", "awspca.cert-manager.io"), false},
		{&[]string{"platform"}, cluster("platform2", ""), false},
		{&[]string{"awspca.cert-manager.io/pca"}, cluster("pca", "awspca.cert-manager.io"), true},
		{&[]string{"awspca.cert-manager.io/pca"}, cluster("pca", ""), false},
		{&[]string{" platform ", ""}, cluster("platform", ""), true},
	} {
		var p IssuerPolicy
		if tc.policy != nil {
			var err error
			if p, err = ParseIssuerPolicy(*tc.policy); err != nil {
				t.Fatal(err)
			}
		}
		if got := p.Allows(tc.ref); got != tc.want {
			t.Errorf("policy %v allows %+v: %v, want %v", tc.policy, tc.ref, got, tc.want)
		}
	}
	for _, bad := range []string{"/name", "group/", "a/b/c"} {
		if _, err := ParseIssuerPolicy([]string{bad}); err == nil {
			t.Errorf("ParseIssuerPolicy(%q) accepted", bad)
		}
	}
}
