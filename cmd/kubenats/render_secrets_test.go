package main

import (
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// expectedLine is one Secret of render's header comment.
var expectedLine = regexp.MustCompile(`(?m)^#   Secret ([a-z0-9.-]+)`)

// TestRenderNamesEverySecretTheServersRead: for every render input, each
// Secret the rendered StatefulSet reads (a volume, a projected source, an
// environment variable) is named in the header that lists what the user
// must make, since render prints no Secret. Read from the StatefulSet
// itself, the check cannot fall behind a new feature. Careless variant
// watched failing: the header as it was before the topology's Secrets
// were listed ("east: the StatefulSet reads Secrets [east-gateway-tls
// east-gateways east-leaf-tls east-leafnodes east-leafnodes-auth
// super-user] the header does not name").
func TestRenderNamesEverySecretTheServersRead(t *testing.T) {
	inputs := append(samples(t), mustGlob(t, filepath.Join("testdata", "*.yaml"))...)
	for _, path := range inputs {
		if strings.HasSuffix(path, ".golden.yaml") {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			for _, cluster := range strings.Split(renderOK(t, path), "# NatsCluster ")[1:] {
				name, _, _ := strings.Cut(cluster, ".")
				cluster = "# NatsCluster " + cluster
				named := map[string]bool{}
				for _, m := range expectedLine.FindAllStringSubmatch(cluster, -1) {
					named[m[1]] = true
				}
				var missing []string
				for _, s := range secretsRead(t, cluster) {
					if !named[s] {
						missing = append(missing, s)
					}
				}
				if len(missing) > 0 {
					t.Errorf("%s: the StatefulSet reads Secrets %v the header does not name", name, missing)
				}
			}
		})
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	out, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// secretsRead are the Secrets the StatefulSet of one cluster's rendering
// reads, sorted.
func secretsRead(t *testing.T, rendering string) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, doc := range parseStream(t, rendering) {
		if field(doc, "kind") != "StatefulSet" {
			continue
		}
		data, err := yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		var sts appsv1.StatefulSet
		if err := yaml.Unmarshal(data, &sts); err != nil {
			t.Fatal(err)
		}
		pod := sts.Spec.Template.Spec
		for _, v := range pod.Volumes {
			if v.Secret != nil {
				seen[v.Secret.SecretName] = true
			}
			if v.Projected != nil {
				for _, src := range v.Projected.Sources {
					if src.Secret != nil {
						seen[src.Secret.Name] = true
					}
				}
			}
		}
		for _, c := range append(pod.InitContainers, pod.Containers...) {
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					seen[e.ValueFrom.SecretKeyRef.Name] = true
				}
			}
			for _, from := range c.EnvFrom {
				if from.SecretRef != nil {
					seen[from.SecretRef.Name] = true
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
