package natscluster

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestIssuerPolicyListsClusterIssuersByGroupAndName: a listed name is
// cert-manager.io's ClusterIssuer of that name and no other group's; an
// Issuer is always allowed; no list at all, like an empty one, allows no
// ClusterIssuer. Careless variants caught (run): matching the name alone
// (an external issuer group's ClusterIssuer of a listed name passes);
// the release before, whose zero policy (the flag not given) allowed
// every ClusterIssuer: the "not given" rows fail.
func TestIssuerPolicyListsClusterIssuersByGroupAndName(t *testing.T) {
	cluster := func(name, group string) v1alpha1.IssuerRef {
		return v1alpha1.IssuerRef{Name: name, Kind: "ClusterIssuer", Group: group}
	}
	for _, tc := range []struct {
		policy *[]string // nil: the flag not given
		ref    v1alpha1.IssuerRef
		want   bool
	}{
		{nil, cluster("anything", ""), false},
		{nil, cluster("anything", "awspca.cert-manager.io"), false},
		{nil, v1alpha1.IssuerRef{Name: "own", Kind: "Issuer"}, true},
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
		var p IssuerPolicy // what the manager holds when the flag is not given
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

// TestIssuerRefsCoverEveryField walks the NatsCluster API types for every
// IssuerRef field, sets that one alone to a ClusterIssuer the default
// policy does not allow, and requires the refusal to name it: one case
// per field, found by the walk, so that an IssuerRef added to the API
// later is covered or fails here. spec.tls.routes.issuerRef is the one
// exception: nothing asks that issuer for anything (the route CA is the
// operator's own), and it must not be refused, or the clusters that
// still name it could not move off it. Careless variant caught (run):
// the release before, whose issuerRefs skipped the leafnode and gateway
// issuers: spec.leafnodes.accept.tls.issuerRef and
// spec.gateway.tls.issuerRef fail.
func TestIssuerRefsCoverEveryField(t *testing.T) {
	paths := issuerRefPaths(reflect.TypeOf(v1alpha1.NatsClusterSpec{}), "spec", nil)
	for _, want := range []string{"spec.tls.client.issuerRef", "spec.tls.routes.issuerRef", "spec.leafnodes.accept.tls.issuerRef", "spec.gateway.tls.issuerRef"} {
		if !slices.ContainsFunc(paths, func(p []reflect.StructField) bool { return fieldPath(p) == want }) {
			t.Fatalf("the walk did not find %s among %d IssuerRef fields: it proves nothing", want, len(paths))
		}
	}
	for _, path := range paths {
		field := fieldPath(path)
		t.Run(field, func(t *testing.T) {
			c := &v1alpha1.NatsCluster{}
			c.Name, c.Namespace = "nats", "apps"
			setIssuerRef(reflect.ValueOf(&c.Spec).Elem(), path[1:], &v1alpha1.IssuerRef{Name: "platform-ca", Kind: "ClusterIssuer"})
			blocker := IssuerPolicy{}.refusal(c)
			if field == "spec.tls.routes.issuerRef" {
				if blocker != nil {
					t.Fatalf("refused (%s): the route issuer is ignored, never asked", blocker.Message)
				}
				return
			}
			if blocker == nil || blocker.Reason != ReasonIssuerNotAllowed || !strings.Contains(blocker.Message, field) {
				t.Fatalf("refusal %+v, want %s naming %s", blocker, ReasonIssuerNotAllowed, field)
			}
		})
	}
}

// issuerRefPaths are the paths, from typ, to every *IssuerRef field. A
// field inside a list would need the walk extended: it fails instead.
func issuerRefPaths(typ reflect.Type, at string, path []reflect.StructField) [][]reflect.StructField {
	var out [][]reflect.StructField
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		p := append(slices.Clone(path), f)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft == reflect.TypeOf(v1alpha1.IssuerRef{}):
			out = append(out, append([]reflect.StructField{{Name: at}}, p...))
		case ft.Kind() == reflect.Struct && ft.PkgPath() == reflect.TypeOf(v1alpha1.IssuerRef{}).PkgPath():
			for _, sub := range issuerRefPaths(ft, at+"."+name, p) {
				out = append(out, append([]reflect.StructField{{Name: at}}, sub[1:]...))
			}
		case (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map) && containsIssuerRef(ft.Elem(), map[reflect.Type]bool{}):
			panic("an IssuerRef inside a list or map at " + at + "." + name + ": extend issuerRefPaths and issuerRefs")
		}
	}
	return out
}

func containsIssuerRef(t reflect.Type, seen map[reflect.Type]bool) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t == reflect.TypeOf(v1alpha1.IssuerRef{}) {
		return true
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return false
	}
	seen[t] = true
	for i := range t.NumField() {
		if containsIssuerRef(t.Field(i).Type, seen) {
			return true
		}
	}
	return false
}

// fieldPath is a path as the refusal writes it: spec.tls.client.issuerRef.
func fieldPath(path []reflect.StructField) string {
	parts := []string{path[0].Name}
	for _, f := range path[1:] {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		parts = append(parts, name)
	}
	return strings.Join(parts, ".")
}

// setIssuerRef sets the field at path under v to ref, making every
// pointer on the way.
func setIssuerRef(v reflect.Value, path []reflect.StructField, ref *v1alpha1.IssuerRef) {
	f := v.FieldByIndex(path[0].Index)
	if len(path) == 1 {
		f.Set(reflect.ValueOf(ref))
		return
	}
	if f.Kind() == reflect.Pointer {
		if f.IsNil() {
			f.Set(reflect.New(f.Type().Elem()))
		}
		f = f.Elem()
	}
	setIssuerRef(f, path[1:], ref)
}
