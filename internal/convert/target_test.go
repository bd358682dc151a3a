package convert

import (
	"strings"
	"testing"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestWhereAResourceLives: NACK's order (the Account, then the
// resource's servers, then the default), each refusal naming what to do,
// and the settings that stop applying named. Careless variants caught: a
// URL with credentials passed on (kubenats' CRD would refuse the whole
// resource; a converter must say why), the default target silently used
// for a resource whose Account is missing (it would land on another
// system), a jsDomain dropped without a word, and a Consumer whose two
// names differ converted under one of them silently.
func TestWhereAResourceLives(t *testing.T) {
	stream := func(spec string) string {
		return "apiVersion: jetstream.nats.io/v1beta2\nkind: Stream\nmetadata: {name: s, namespace: ns}\nspec:\n  name: s\n" + spec
	}
	for _, tc := range []struct {
		name, in string
		opts     Options
		err      string
		lost     string
		servers  []string
		cluster  string
	}{
		{name: "default cluster", in: stream(""), opts: Options{Cluster: &v1alpha1.ClusterRef{Name: "nats"}}, cluster: "nats"},
		{name: "default servers", in: stream(""), opts: Options{Servers: []string{"nats://a:4222"}}, servers: []string{"nats://a:4222"}},
		{name: "no default", in: stream(""), err: "--cluster or --server"},
		{name: "own servers first", in: stream("  servers: [nats://b:4222]\n"), opts: Options{Cluster: &v1alpha1.ClusterRef{Name: "nats"}}, servers: []string{"nats://b:4222"}},
		{name: "credentials in a URL", in: stream("  servers: [nats://u:p@b:4222, nats://c:4222]\n"), lost: "without credentials", servers: []string{"nats://c:4222"}},
		{name: "no URL left", in: stream("  servers: [nats://u:p@b:4222]\n"), opts: Options{Cluster: &v1alpha1.ClusterRef{Name: "nats"}}, err: "no URL kubenats can take"},
		{name: "missing account", in: stream("  account: gone\n"), opts: Options{Cluster: &v1alpha1.ClusterRef{Name: "nats"}}, err: `Account "gone", which is not in the input`},
		{name: "domain on a cluster", in: stream("  jsDomain: hub\n"), opts: Options{Cluster: &v1alpha1.ClusterRef{Name: "nats"}}, cluster: "nats", lost: "own JetStream domain"},
		{name: "not NACK", in: "apiVersion: jetstream.nats.io/v1beta1\nkind: Stream\nmetadata: {name: s}\nspec: {name: s}\n", err: "not a NACK jetstream.nats.io/v1beta2 resource"},
		{name: "two consumer names", in: "apiVersion: jetstream.nats.io/v1beta2\nkind: Consumer\nmetadata: {name: c}\nspec: {name: a, durableName: b, streamName: s}\n",
			opts: Options{Cluster: &v1alpha1.ClusterRef{Name: "nats"}}, cluster: "nats", lost: `differs from durableName "b"`},
	} {
		res, err := Convert(documents(t, tc.in), tc.opts)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var lost []string
		for _, l := range res.Lost {
			lost = append(lost, l.String())
		}
		if got := strings.Join(lost, "; "); (tc.lost == "") != (got == "") || !strings.Contains(got, tc.lost) {
			t.Errorf("%s: not carried %q, want %q", tc.name, got, tc.lost)
		}
		target := res.Objects[0].(v1alpha1.JetStreamObject).GetTarget()
		switch {
		case tc.cluster != "" && (target.Cluster == nil || target.Cluster.Name != tc.cluster):
			t.Errorf("%s: target %+v, want NatsCluster %s", tc.name, target, tc.cluster)
		case tc.servers != nil && (target.Connection == nil || strings.Join(target.Connection.Servers, ",") != strings.Join(tc.servers, ",")):
			t.Errorf("%s: target %+v, want servers %v", tc.name, target, tc.servers)
		}
	}
}

// TestConsumerNameBecomesItsDurableName: NACK's name alone is the
// consumer's name, which kubenats calls durableName.
func TestConsumerNameBecomesItsDurableName(t *testing.T) {
	res, err := Convert(documents(t, "apiVersion: jetstream.nats.io/v1beta2\nkind: Consumer\nmetadata: {name: c}\nspec: {name: only, streamName: s}\n"),
		Options{Cluster: &v1alpha1.ClusterRef{Name: "nats"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Objects[0].(*v1alpha1.Consumer).Spec.DurableName; got != "only" || len(res.Lost) != 0 {
		t.Errorf("durableName %q, lost %v; want only, nothing lost", got, res.Lost)
	}
}
