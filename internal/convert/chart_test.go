package convert

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/test/upstream"
)

// readChart is the official chart's rendering of a three-server JetStream
// cluster: the project's chart-shaped stand-in, or the real rendering
// when KUBENATS_UPSTREAM_FIXTURES names it (package upstream).
func readChart(t *testing.T) string {
	t.Helper()
	return string(upstream.ChartRendering(t))
}

// TestChartRenderingConverts: the chart's own rendering becomes a
// NatsCluster of the release's name with its three servers, version,
// JetStream on a 1Gi claim, no client authentication and plaintext
// accepted (the chart runs neither, so clients that connect without
// credentials or TLS keep doing so);
// nothing is lost: each setting of its nats.conf is one kubenats writes
// itself with the same value.
// Careless variants: the image tag taken whole as the version
// ("2.14.2-alpine" would be a pre-release to kubenats), the chart's
// default nats.conf settings reported as lost.
func TestChartRenderingConverts(t *testing.T) {
	res, err := Chart(documents(t, readChart(t)), "default")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Lost) != 0 {
		t.Fatalf("lost %v", res.Lost)
	}
	if len(res.Objects) != 1 {
		t.Fatalf("objects %d, want the NatsCluster alone", len(res.Objects))
	}
	c := res.Objects[0].(*v1alpha1.NatsCluster)
	s := c.Spec
	switch {
	case c.Name != "nats" || c.Namespace != "default":
		t.Fatalf("NatsCluster %s/%s, want default/nats", c.Namespace, c.Name)
	case s.Replicas == nil || *s.Replicas != 3:
		t.Fatalf("replicas %v", s.Replicas)
	case s.Version != "2.14.2" || s.Image != "nats:2.14.2-alpine":
		t.Fatalf("version %q image %q, want 2.14.2 and the chart's image", s.Version, s.Image)
	case s.JetStream.Enabled == nil || !*s.JetStream.Enabled || s.JetStream.FileStore.Size == nil || s.JetStream.FileStore.Size.String() != "1Gi":
		t.Fatalf("jetstream %+v", s.JetStream)
	case s.JetStream.MemoryStore != nil:
		t.Fatalf("memory store %+v, the chart sets none", s.JetStream.MemoryStore)
	case s.Auth.Mode != v1alpha1.AuthNone:
		t.Fatalf("auth mode %q, want none: the chart lets clients in without credentials", s.Auth.Mode)
	case s.TLS.Client == nil || s.TLS.Client.AllowPlaintext == nil || !*s.TLS.Client.AllowPlaintext:
		t.Fatalf("client TLS %+v, want plaintext still accepted: the chart's clients speak it", s.TLS.Client)
	case len(s.PodTemplate.Labels) != 0 || s.Config != nil:
		t.Fatalf("the chart's own labels or settings carried: %v %v", s.PodTemplate.Labels, s.Config)
	}
	// What is written is a valid NatsCluster as the API reads it.
	out, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back v1alpha1.NatsCluster
	if err := yaml.UnmarshalStrict(out, &back); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestChartSettingsCarriedOrNamed: a release whose nats.conf sets a user
// and password, client TLS from a mounted Secret, limits kubenats passes
// through, and settings it has no field for: the user's password goes
// into a Secret labelled for kubenats (never left in clear in the
// NatsCluster), the TLS Secret is named, the limits carried, and every
// other setting named with why. Careless variants: a password carried in
// the spec, a setting dropped without a word.
func TestChartSettingsCarriedOrNamed(t *testing.T) {
	text := readChart(t)
	conf := `      "authorization": {"user": "app", "password": "s3cret-Pa55"},
      "tls": {"cert_file": "/etc/nats-certs/client/tls.crt", "key_file": "/etc/nats-certs/client/tls.key", "verify": true},
      "max_payload": 2MB,
      "write_deadline": "5s",
      "websocket": {"port": 8080, "no_tls": true},
      "jetstream": {"max_file_store": 10Gi, "max_memory_store": 1Gi, "store_dir": "/data", "unique_tag": "az"},
      "cluster": {"name": "other", "port": 6222, "routes": [], "pool_size": 5},
      "accounts": {"A": {"users": [{"user": "a", "password": "b"}]}},
`
	text = upstream.Edit(t, text, `      "http_port": 8222,
      "jetstream": {
        "max_file_store": 1Gi,
        "max_memory_store": 0,
        "store_dir": "/data"
      },
`, `      "http_port": 8222,
`)
	text = upstream.Edit(t, text, `      "cluster": {
        "name": "nats",
        "no_advertise": true,
        "port": 6222,
        "routes": [
          "nats://nats-0.nats-headless:6222",
          "nats://nats-1.nats-headless:6222",
          "nats://nats-2.nats-headless:6222"
        ]
      },
`, conf)
	text = upstream.Edit(t, text, `        - mountPath: /data
          name: nats-js
`, `        - mountPath: /data
          name: nats-js
        - mountPath: /etc/nats-certs/client
          name: client-tls
`)
	text = upstream.Edit(t, text, `      - emptyDir: {}
        name: pid
`, `      - emptyDir: {}
        name: pid
      - name: client-tls
        secret:
          secretName: nats-client-tls
`)
	res, err := Chart(documents(t, text), "default")
	if err != nil {
		t.Fatal(err)
	}
	c := res.Objects[0].(*v1alpha1.NatsCluster)
	s := c.Spec
	switch {
	case s.Auth.Mode != v1alpha1.AuthUsers || s.Auth.User != "app" || s.Auth.SecretRef == nil || s.Auth.SecretRef.Name != "nats-client-auth":
		t.Fatalf("auth %+v", s.Auth)
	case s.TLS.Client == nil || s.TLS.Client.SecretName != "nats-client-tls" || !s.TLS.Client.Verify:
		t.Fatalf("client TLS %+v", s.TLS.Client)
	case string(s.Config["max_payload"].Raw) != "2097152" || string(s.Config["write_deadline"].Raw) != `"5s"`:
		t.Fatalf("config %v", s.Config)
	case s.JetStream.FileStore.Size.String() != "10Gi" || s.JetStream.MemoryStore == nil || s.JetStream.MemoryStore.Size.String() != "1Gi":
		t.Fatalf("jetstream %+v", s.JetStream)
	}
	out, _ := yaml.Marshal(c)
	if strings.Contains(string(out), "s3cret") {
		t.Fatalf("the password is in the NatsCluster:\n%s", out)
	}
	if len(res.Objects) != 2 || len(res.Secrets) != 1 || res.Secrets[0] != "default/nats-client-auth" {
		t.Fatalf("objects %d, secrets %v: want the NatsCluster and the password's Secret", len(res.Objects), res.Secrets)
	}
	var lost []string
	for _, l := range res.Lost {
		lost = append(lost, l.Field)
	}
	want := []string{"nats.conf accounts", "nats.conf cluster.name", "nats.conf cluster.pool_size",
		"nats.conf jetstream.unique_tag", "nats.conf websocket"}
	if strings.Join(lost, "; ") != strings.Join(want, "; ") {
		t.Fatalf("lost %q, want %q", lost, want)
	}
}

// TestChartCredentialsKubenatsWouldRefuse: a chart password kubenats
// would refuse to pass to the servers, or a user name the API refuses,
// is named as lost (never quoted) and no Secret is written for it; a
// nats.conf that includes files is refused whole, before the parser could
// read this machine's files. Careless variants: the password carried and
// the cluster then blocked by the operator at its first pass; the include
// handed to the parser.
func TestChartCredentialsKubenatsWouldRefuse(t *testing.T) {
	withAuth := func(block string) string {
		return upstream.Edit(t, readChart(t), `      "http_port": 8222,
`, `      "http_port": 8222,
      "authorization": `+block+`,
`)
	}
	for _, tc := range []struct {
		name, block, lost string
	}{
		{"a password that names a variable", `{"user": "app", "password": "$HOME"}`, "nats.conf authorization password"},
		{"a user name with a space", `{"user": "my app", "password": "s3cret-Pa55"}`, "nats.conf authorization user"},
		{"a token that spells include", `{"token": "xINCLUDEx"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Chart(documents(t, withAuth(tc.block)), "default")
			if tc.lost == "" {
				if err == nil || !strings.Contains(err.Error(), "includes other files") {
					t.Fatalf("Chart: %v, want the include refused", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Objects) != 1 || len(res.Secrets) != 0 {
				t.Fatalf("objects %d secrets %v: want the NatsCluster alone", len(res.Objects), res.Secrets)
			}
			if len(res.Lost) != 1 || res.Lost[0].Field != tc.lost {
				t.Fatalf("lost %v, want %s", res.Lost, tc.lost)
			}
			if strings.Contains(res.Lost[0].Why, "$HOME") || strings.Contains(res.Lost[0].Why, "s3cret") {
				t.Fatalf("the loss quotes the credential: %s", res.Lost[0].Why)
			}
			if a := res.Objects[0].(*v1alpha1.NatsCluster).Spec.Auth; a.SecretRef != nil {
				t.Fatalf("auth %+v names a Secret that was not written", a)
			}
		})
	}
}
