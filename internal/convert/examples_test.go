package convert

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/upstream"
)

// readExamples reads NACK's examples from dir: the project's NACK-shaped
// stand-ins, or NACK's published examples when KUBENATS_UPSTREAM_FIXTURES
// names them (package upstream).
func readExamples(t *testing.T, dir string, names ...string) [][]byte {
	t.Helper()
	var docs [][]byte
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatalf("NACK's examples: %v", err)
		}
		docs = append(docs, documents(t, string(data))...)
	}
	return docs
}

// TestNACKExamplesConvert: each of NACK's published examples converts;
// those that say nothing of where they live go to the NatsCluster given,
// the secure example's Stream and Consumer to its Account's servers and
// TLS Secret, and the example that reads credentials and certificates
// from files in NACK's pod names exactly those two settings as not
// carried. Every example is covered: a new file in the fixtures fails
// the test until it has an expectation.
func TestNACKExamplesConvert(t *testing.T) {
	nackExamples := upstream.NACKExamples(t)
	nats := &v1alpha1.ClusterRef{Name: "nats"}
	opts := Options{Namespace: "default", Cluster: nats}
	covered := map[string]bool{}
	secure := &v1alpha1.Connection{Servers: []string{"nats://nats:4222"}, TLSSecretRef: &v1alpha1.LocalRef{Name: "nack-a-tls"}}
	for _, tc := range []struct {
		files   []string
		objects []string // Kind/name
		target  v1alpha1.Target
		lost    []string
		secrets []string
	}{
		{files: []string{"stream.yml"}, objects: []string{"Stream/mystream"}, target: v1alpha1.Target{Cluster: nats}},
		{files: []string{"stream_mirror.yml"}, objects: []string{"Stream/mystream-mirror"}, target: v1alpha1.Target{Cluster: nats}},
		{files: []string{"stream_placement.yml"}, objects: []string{"Stream/mystream-placement"}, target: v1alpha1.Target{Cluster: nats}},
		{files: []string{"stream_sources.yml"}, objects: []string{"Stream/mystream-sources"}, target: v1alpha1.Target{Cluster: nats}},
		{files: []string{"consumer_pull.yml"}, objects: []string{"Consumer/my-pull-consumer"}, target: v1alpha1.Target{Cluster: nats}},
		{files: []string{"consumer_push.yml"}, objects: []string{"Consumer/my-push-consumer"}, target: v1alpha1.Target{Cluster: nats}},
		{files: []string{"stream_servers.yml"}, objects: []string{"Stream/mystream"},
			target: v1alpha1.Target{Connection: &v1alpha1.Connection{Servers: []string{"nats://acme.org:4222"}}},
			lost:   []string{"spec.creds", "spec.tls"}},
		{files: []string{"nats-account-a.yaml", "nats-stream-foo-a.yaml", "nats-consumer-bar-a.yaml"},
			objects: []string{"Stream/foo", "Consumer/bar"}, target: v1alpha1.Target{Connection: secure}, secrets: []string{"default/nack-a-tls"}},
		{files: []string{"account-foo.yaml", "stream-foo.yaml"},
			objects: []string{"Stream/foo"}, target: v1alpha1.Target{Connection: secure}, secrets: []string{"default/nack-a-tls"}},
	} {
		name := strings.Join(tc.files, "+")
		res, err := Convert(readExamples(t, nackExamples, tc.files...), opts)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var objects []string
		for _, o := range res.Objects {
			objects = append(objects, o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName())
			if got := o.(v1alpha1.JetStreamObject).GetTarget(); !reflect.DeepEqual(got, tc.target) {
				t.Errorf("%s: %s lives at %+v, want %+v", name, o.GetName(), got, tc.target)
			}
			if o.GetNamespace() != "default" {
				t.Errorf("%s: %s in namespace %q, want default", name, o.GetName(), o.GetNamespace())
			}
		}
		if !slices.Equal(objects, tc.objects) {
			t.Errorf("%s: objects %v, want %v", name, objects, tc.objects)
		}
		var lost []string
		for _, l := range res.Lost {
			lost = append(lost, l.Field)
		}
		if !slices.Equal(lost, tc.lost) {
			t.Errorf("%s: not carried %v, want %v", name, res.Lost, tc.lost)
		}
		if !slices.Equal(res.Secrets, tc.secrets) {
			t.Errorf("%s: Secrets %v, want %v", name, res.Secrets, tc.secrets)
		}
		for _, f := range tc.files {
			covered[f] = true
		}
	}
	entries, err := os.ReadDir(nackExamples)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !covered[e.Name()] {
			t.Errorf("NACK's example %s has no expectation here", e.Name())
		}
	}
}
