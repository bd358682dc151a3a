package loopback

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
)

func TestRewritePathsAtPathBoundaries(t *testing.T) {
	ms := []mount{{"/data", "/tmp/p/data"}, {"/etc/nats-config", "/tmp/p/config"}, {"/etc/nats-config/certs", "/tmp/p/certs"}}
	sortMounts(ms)
	for in, want := range map[string]string{
		`store_dir: "/data"`:                    `store_dir: "/tmp/p/data"`,
		`store_dir: "/data/js"`:                 `store_dir: "/tmp/p/data/js"`,
		`--config=/etc/nats-config/nats.conf`:   `--config=/tmp/p/config/nats.conf`,
		`cert_file: "/etc/nats-config/certs/a"`: `cert_file: "/tmp/p/certs/a"`,
		`store_dir: "/database"`:                `store_dir: "/database"`,
		`store_dir: "/srv/data"`:                `store_dir: "/srv/data"`,
		`url: "nats://data:4222"`:               `url: "nats://data:4222"`,
		`/data`:                                 `/tmp/p/data`,
	} {
		if got := rewritePaths(in, ms); got != want {
			t.Errorf("rewritePaths(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPodDNSName(t *testing.T) {
	for host, want := range map[string][3]string{
		"nats-0.nats-headless":                         {"nats-0", "nats-headless", ""},
		"nats-0.nats-headless.demo":                    {"nats-0", "nats-headless", "demo"},
		"nats-0.nats-headless.demo.svc":                {"nats-0", "nats-headless", "demo"},
		"nats-0.nats-headless.demo.svc.cluster.local":  {"nats-0", "nats-headless", "demo"},
		"nats-0.nats-headless.demo.svc.cluster.local.": {"nats-0", "nats-headless", "demo"},
	} {
		pod, svc, ns, ok := podDNSName(host)
		if !ok || [3]string{pod, svc, ns} != want {
			t.Errorf("podDNSName(%q) = %q %q %q %t, want %q", host, pod, svc, ns, ok, want)
		}
	}
	for _, host := range []string{"localhost", "nats-0.nats-headless.demo.cluster", "a.b.c.svc.example.org", "a.b.c.d.e.f.g"} {
		if _, _, _, ok := podDNSName(host); ok {
			t.Errorf("podDNSName(%q) is a pod name, want not", host)
		}
	}
}

// TestRewrittenConfigOfTheOperator rewrites the nats.conf the operator
// renders and reads the result with nats-server's own parser: listeners on
// the pod's address, paths in the pod's directories, and pod DNS names left
// alone (the server resolves them through its hosts file).
func TestRewrittenConfigOfTheOperator(t *testing.T) {
	off := false
	c := &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Name: "nats", Namespace: "demo"}}
	c.Spec.TLS.Routes.Enabled = &off // no certificate files to read here
	conf := operatorConf(t, c)
	dir := t.TempDir()
	ms := []mount{{"/etc/nats-config", dir + "/config"}, {"/var/run/nats", dir + "/pid"}, {"/data", dir + "/data"},
		{render.ClientTLSDir, writeClientCertificate(t, c, dir+"/client-tls")}}
	sortMounts(ms)
	out := bindListeners(rewritePaths(conf, ms), "127.0.9.2")

	routes := `["nats://u:p@nats-0.nats-headless:6222", "nats://u:p@nats-1.nats-headless:6222"]`
	for name, value := range map[string]string{"SERVER_NAME": "nats-1", "NATS_PASSWORD": "a", "NATS_SYSTEM_PASSWORD": "b",
		"NATS_ROUTE_PASSWORD": "p", "NATS_ROUTE_URLS": routes, "NATS_ROUTE_ADVERTISE": `"nats-1.nats-headless:6222"`,
		render.EnvZoneTag: `"zone:"`, render.EnvRegionTag: `"region:"`} {
		t.Setenv(name, value)
	}
	opts := parseConf(t, out)
	if opts.Host != "127.0.9.2" || opts.Cluster.Host != "127.0.9.2" || opts.HTTPHost != "" {
		t.Errorf("host %q, cluster host %q, http host %q; want the pod's address for the first two and the default (the host) for http", opts.Host, opts.Cluster.Host, opts.HTTPHost)
	}
	var hosts []string
	for _, u := range opts.Routes {
		hosts = append(hosts, u.Host)
	}
	if got := strings.Join(hosts, " "); got != "nats-0.nats-headless:6222 nats-1.nats-headless:6222" {
		t.Errorf("routes = %s, want the pod DNS names untouched", got)
	}
	if opts.StoreDir != dir+"/data" || opts.PidFile != dir+"/pid/nats.pid" {
		t.Errorf("store_dir %q, pid_file %q; want them under %s", opts.StoreDir, opts.PidFile, dir)
	}
}

// TestBindListenersOverridesHosts: a host the file sets itself loses.
func TestBindListenersOverridesHosts(t *testing.T) {
	conf := "host: 0.0.0.0\nport: 4222 # a comment with a { brace\ncluster { host: \"0.0.0.0\", port: 6222, name: \"c}\" }\nleafnodes {\n  port: 7422\n}\n"
	opts := parseConf(t, bindListeners(conf, "127.0.9.7"))
	if opts.Host != "127.0.9.7" || opts.Cluster.Host != "127.0.9.7" || opts.LeafNode.Host != "127.0.9.7" || opts.Cluster.Name != "c}" {
		t.Errorf("host %q, cluster %q (%q), leafnodes %q", opts.Host, opts.Cluster.Host, opts.Cluster.Name, opts.LeafNode.Host)
	}
}

// TestBindListenersInAJSONConf: the official chart writes nats.conf as
// one JSON object with quoted keys. Its cluster listener is bound too; a
// rewriter that looked for unquoted top-level words left it on 0.0.0.0,
// and the chart's second server on this machine could not listen.
func TestBindListenersInAJSONConf(t *testing.T) {
	conf := "{\n  \"cluster\": {\n    \"name\": \"nats\",\n    \"port\": 6222,\n    \"routes\": [\"nats://a:6222\"]\n  },\n  \"http_port\": 8222,\n  \"port\": 4222\n}\n"
	opts := parseConf(t, bindListeners(conf, "127.0.9.8"))
	if opts.Host != "127.0.9.8" || opts.Cluster.Host != "127.0.9.8" || opts.Cluster.Name != "nats" || len(opts.Routes) != 1 {
		t.Errorf("host %q, cluster %q (%q), routes %v", opts.Host, opts.Cluster.Host, opts.Cluster.Name, opts.Routes)
	}
}

// writeClientCertificate writes, in dir, the client certificate files the
// operator would give c's pods, and returns dir.
func writeClientCertificate(t *testing.T, c *v1alpha1.NatsCluster, dir string) string {
	t.Helper()
	now := time.Now()
	ca, err := pki.NewCA("client CA", now, time.Hour)
	must(t, err)
	cert, err := pki.Issue(ca, c.ClientDNSNames(render.DefaultClusterDomain), now, time.Hour)
	must(t, err)
	must(t, os.MkdirAll(dir, 0o700))
	for name, data := range map[string]string{render.TLSCertKey: cert.Cert, render.TLSKeyKey: cert.Key, render.TLSCAKey: ca.Cert} {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600))
	}
	return dir
}

func operatorConf(t *testing.T, c *v1alpha1.NatsCluster) string {
	t.Helper()
	objs, err := render.Objects(c, render.Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if cm, ok := o.(*corev1.ConfigMap); ok {
			return cm.Data[render.ConfigKey]
		}
	}
	t.Fatal("no ConfigMap rendered")
	return ""
}

func parseConf(t *testing.T, conf string) *server.Options {
	t.Helper()
	for _, env := range []string{"SERVER_NAME", "NATS_PASSWORD", "NATS_SYSTEM_PASSWORD", "NATS_TOKEN"} {
		t.Setenv(env, "x"+strings.ToLower(env))
	}
	dir := t.TempDir()
	// The users.conf that nats.conf includes in mode users, as the pods
	// mount it beside nats.conf.
	users, _, err := render.UsersConf(&v1alpha1.NatsCluster{}, render.Credentials{Client: "a", System: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, render.UsersConfKey), []byte(users), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, conf)
	}
	return opts
}
