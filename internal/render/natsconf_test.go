package render_test

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/conf"
	"github.com/nats-io/nats-server/v2/server"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsconf"
	"github.com/kubenats/kubenats/internal/pki"
	"github.com/kubenats/kubenats/internal/render"
)

// madeUpSecrets are the values the tests give Secret keys, in order of first
// use. Letters only, as the operator generates them: nats-server lexes an
// environment value as config, and these must stay strings.
var madeUpSecrets = []string{
	"quokkaZephyrLantern",
	"marmotQuillBramble",
	"ocelotFjordWhisker",
	"tapirGlimmerSaffron",
}

// madeUpZone and madeUpRegion are the labels Kubernetes copies from the
// node onto the pod in these tests.
const (
	madeUpZone   = "eu-west-1b"
	madeUpRegion = "eu-west-1"
)

// podEnvironment is the environment the first pod of sts gets in its nats
// container: the pod name for metadata.name, a made-up value per Secret key
// (returned in secrets), plain values as they are.
func podEnvironment(t *testing.T, ctr corev1.Container, podName string) (env map[string]string, secrets map[secretRef]string) {
	t.Helper()
	env, secrets = map[string]string{}, map[secretRef]string{}
	for _, e := range ctr.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = expandKubeRefs(e.Value, env)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			env[e.Name] = podName
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.labels['"+v1alpha1.LabelZone+"']":
			env[e.Name] = madeUpZone
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.labels['"+v1alpha1.LabelRegion+"']":
			env[e.Name] = madeUpRegion
		case e.ValueFrom.SecretKeyRef != nil:
			ref := secretRef{e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key}
			if _, ok := secrets[ref]; !ok {
				if len(secrets) == len(madeUpSecrets) {
					t.Fatalf("more Secret keys than made-up values")
				}
				secrets[ref] = madeUpSecrets[len(secrets)]
			}
			env[e.Name] = secrets[ref]
		default:
			t.Fatalf("env %s: unsupported source %+v; teach podEnvironment about it", e.Name, e.ValueFrom)
		}
	}
	return env, secrets
}

// kubeRef is a $(NAME) the kubelet expands in an env value, or $$.
var kubeRef = regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expandKubeRefs expands value as the kubelet does: $(NAME) of a variable
// defined earlier becomes its value, $$ becomes $, anything else stays.
func expandKubeRefs(value string, defined map[string]string) string {
	return kubeRef.ReplaceAllStringFunc(value, func(ref string) string {
		if ref == "$$" {
			return "$"
		}
		if v, ok := defined[ref[2:len(ref)-1]]; ok {
			return v
		}
		return ref
	})
}

// envReference is a $NAME in nats.conf.
var envReference = regexp.MustCompile(`\$([A-Z_][A-Z0-9_]*)`)

// loadedConf is one rendering as nats-server reads it.
type loadedConf struct {
	text    string
	opts    *server.Options
	raw     map[string]any
	secrets map[secretRef]string
}

// loadAsServer renders c, gives the process the first pod's environment and
// runs the ConfigMap's nats.conf through nats-server's full option
// processing. The file is parsed as rendered, store_dir /data included:
// option processing only records store_dir, and the test checks that it
// creates nothing there.
func loadAsServer(t *testing.T, c *v1alpha1.NatsCluster) loadedConf {
	t.Helper()
	return loadAsServerWith(t, c, render.Inputs{})
}

// loadAsServerWith is loadAsServer with what the controller decided.
func loadAsServerWith(t *testing.T, c *v1alpha1.NatsCluster, in render.Inputs) loadedConf {
	t.Helper()
	objs := renderObjects(t, c, in)
	cm := find[*corev1.ConfigMap](t, objs, c.ConfigMapName())
	text := cm.Data[render.ConfigKey]
	ctr := serverContainerOf(t, c)
	env, secrets := podEnvironment(t, ctr, c.PodName(0))
	if password, ok := env[render.EnvRoutePassword]; ok {
		// The routes Secret holds the route list made with the password.
		env[render.EnvRouteURLs] = render.RouteURLs(c.WithDefaults(), password)
		delete(secrets, secretRef{c.RouteSecretName(), render.RouteURLsKey})
	}

	dir := t.TempDir()
	// In mode users the passwords come from users.conf beside nats.conf,
	// made from the Secrets' values as the operator makes it.
	fromUsersFile := map[string]bool{}
	if d := c.WithDefaults(); d.HasUsersFile() {
		clientRef, _ := d.ClientSecretRef()
		client, system := madeUpSecrets[len(madeUpSecrets)-1], madeUpSecrets[len(madeUpSecrets)-2]
		secrets[secretRef{clientRef.Name, clientRef.Key}] = client
		secrets[secretRef{d.SystemSecretName(), render.PasswordKey}] = system
		users, _, err := render.UsersConf(d, render.Credentials{Client: client, System: system})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, render.UsersConfKey), []byte(users), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{render.EnvPassword, render.EnvSystemPassword, render.EnvUsersRevision} {
			fromUsersFile[name] = true
		}
	}
	// Every $NAME the file reads must come from the pod, not from whatever
	// this test process happens to have in its environment.
	for _, m := range envReference.FindAllStringSubmatch(text, -1) {
		if _, ok := env[m[1]]; !ok && !fromUsersFile[m[1]] {
			t.Errorf("nats.conf reads $%s, which the nats container does not set", m[1])
			t.Setenv(m[1], "")
			os.Unsetenv(m[1])
		}
	}
	for name, value := range env {
		t.Setenv(name, value)
	}

	path := filepath.Join(dir, "nats.conf")
	// The certificates the pod mounts, made here and put where it would.
	mounted := strings.ReplaceAll(text, render.TLSDir+"/", writeTestCertificates(t)+"/")
	if err := os.WriteFile(path, []byte(mounted), 0o600); err != nil {
		t.Fatal(err)
	}
	_, statErr := os.Stat(render.StoreDir)
	storeDirAbsent := errors.Is(statErr, fs.ErrNotExist)

	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server rejects the rendered nats.conf: %v\n%s", err, text)
	}
	if _, err := os.Stat(render.StoreDir); storeDirAbsent && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("option processing created %s (stat: %v); it should only record it", render.StoreDir, err)
	}
	raw, err := conf.ParseFile(path)
	if err != nil {
		t.Fatalf("conf.ParseFile: %v", err)
	}
	return loadedConf{text: text, opts: opts, raw: raw, secrets: secrets}
}

// confWant is what nats-server must read from one rendering. Zero fields
// mean the defaults of a NatsCluster.
type confWant struct {
	name     string // cluster name; "" is demo
	replicas int    // 0 is 3
	noJS     bool
	// noRouteTLS: routes without TLS (still with a password).
	noRouteTLS bool
	claim      int64 // the claim size, 0 is 10Gi; max_file_store is FileStoreLimit of it
	maxMemory  int64 // 0 is unset
	domain     string
	mode       v1alpha1.AuthMode // "" is users
	appUser    string            // "" is nats
	// clientSecret is where the client password or token must come from;
	// zero is <name>-auth with key password (users) or token (token).
	clientSecret secretRef
	// extra checks passthrough settings.
	extra func(t *testing.T, opts *server.Options)
}

func TestNatsConfLoadsInNatsServer(t *testing.T) {
	const gi = int64(1) << 30
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
		want confWant
	}{
		{"defaults: 3 servers, JetStream, users", cluster(), confWant{}},
		{"one server has no routes", cluster(withReplicas(1)), confWant{replicas: 1}},
		{"five servers route to all five", cluster(withReplicas(5)), confWant{replicas: 5}},
		{"JetStream off", cluster(withJetStream(false)), confWant{noJS: true}},
		{"route TLS off keeps the route password", cluster(withRouteTLS(false)), confWant{noRouteTLS: true}},
		{"JetStream off with two servers", cluster(withJetStream(false), withReplicas(2)), confWant{noJS: true, replicas: 2}},
		{"fileStore size in Gi", cluster(withFileStoreSize("1Gi")), confWant{claim: gi}},
		{"fileStore size in Mi", cluster(withFileStoreSize("500Mi")), confWant{claim: 500 << 20}},
		{"fileStore size in decimal G", cluster(withFileStoreSize("20G")), confWant{claim: 20_000_000_000}},
		{"memoryStore", cluster(withMemoryStore("256Mi")), confWant{maxMemory: 256 << 20}},
		{"domain", cluster(withDomain("hub-1")), confWant{domain: "hub-1"}},
		{"users with a custom user name", cluster(withAuthUser("app.user-1")), confWant{appUser: "app.user-1"}},
		{"users with a secretRef", cluster(withAuthSecret("my-creds", "pw")), confWant{clientSecret: secretRef{"my-creds", "pw"}}},
		{"users with a secretRef and no key", cluster(withAuthSecret("my-creds", "")), confWant{clientSecret: secretRef{"my-creds", "password"}}},
		{"users explicitly, JetStream off", cluster(withAuthMode(v1alpha1.AuthUsers), withJetStream(false)), confWant{noJS: true}},
		{"token", cluster(withAuthMode(v1alpha1.AuthToken)), confWant{mode: v1alpha1.AuthToken}},
		{"token with a secretRef", cluster(withAuthMode(v1alpha1.AuthToken), withAuthSecret("tok", "value")),
			confWant{mode: v1alpha1.AuthToken, clientSecret: secretRef{"tok", "value"}}},
		{"token, one server, JetStream off", cluster(withAuthMode(v1alpha1.AuthToken), withReplicas(1), withJetStream(false)),
			confWant{mode: v1alpha1.AuthToken, replicas: 1, noJS: true}},
		{"no auth", cluster(withAuthMode(v1alpha1.AuthNone)), confWant{mode: v1alpha1.AuthNone}},
		{"no auth, one server", cluster(withAuthMode(v1alpha1.AuthNone), withReplicas(1)), confWant{mode: v1alpha1.AuthNone, replicas: 1}},
		{"name with dashes", cluster(named("my-nats-eu")), confWant{name: "my-nats-eu"}},
		{"name starting with digits", cluster(named("1-a")), confWant{name: "1-a"}},
		{"name of digits only", cluster(named("12")), confWant{name: "12"}},
		{"name with dashes, token", cluster(named("a-b-c"), withAuthMode(v1alpha1.AuthToken)), confWant{name: "a-b-c", mode: v1alpha1.AuthToken}},
		{"passthrough max_payload", cluster(withConfig("max_payload", "8388608")), confWant{
			extra: func(t *testing.T, o *server.Options) { equal(t, "MaxPayload", o.MaxPayload, int32(8388608)) },
		}},
		{"passthrough debug and trace", cluster(withConfig("debug", "true"), withConfig("trace", "true")), confWant{
			extra: func(t *testing.T, o *server.Options) {
				equal(t, "Debug", o.Debug, true)
				equal(t, "Trace", o.Trace, true)
			},
		}},
		{"passthrough nested map", cluster(withConfig("server_metadata", `{"team": "payments", "tier": "gold"}`)), confWant{
			extra: func(t *testing.T, o *server.Options) {
				equal(t, "Metadata[team]", o.Metadata["team"], "payments")
				equal(t, "Metadata[tier]", o.Metadata["tier"], "gold")
			},
		}},
		{"passthrough array", cluster(withConfig("server_tags", `["region:eu", "tier:gold"]`)), confWant{
			extra: func(t *testing.T, o *server.Options) {
				equal(t, "Tags", fmt.Sprint(o.Tags), "[region:eu tier:gold]")
			},
		}},
		{"passthrough duration strings", cluster(withConfig("ping_interval", `"2m"`), withConfig("write_deadline", `"10s"`)), confWant{
			extra: func(t *testing.T, o *server.Options) {
				equal(t, "PingInterval", o.PingInterval, 2*time.Minute)
				equal(t, "WriteDeadline", o.WriteDeadline, 10*time.Second)
			},
		}},
		{"passthrough integer beyond float64 precision", cluster(withConfig("max_pending", "9007199254740993")), confWant{
			extra: func(t *testing.T, o *server.Options) { equal(t, "MaxPending", o.MaxPending, int64(9007199254740993)) },
		}},
		{"everything at once", cluster(named("prod-nats"), withReplicas(5), withDomain("leaf"), withMemoryStore("1Gi"),
			withFileStoreSize("50Gi"), withAuthUser("svc"), withAuthSecret("prod-creds", "secret"), withConfig("max_payload", "2097152")),
			confWant{name: "prod-nats", replicas: 5, domain: "leaf", maxMemory: gi, claim: 50 * gi, appUser: "svc",
				clientSecret: secretRef{"prod-creds", "secret"},
				extra:        func(t *testing.T, o *server.Options) { equal(t, "MaxPayload", o.MaxPayload, int32(2097152)) }}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := fillDefaults(tc.want)
			got := loadAsServer(t, tc.in)
			o := got.opts

			equal(t, "ServerName", o.ServerName, w.name+"-0")
			equal(t, "Port", o.Port, render.ClientPort)
			equal(t, "HTTPPort", o.HTTPPort, render.MonitorPort)
			// TLS by default, plaintext refused (the careless variant
			// that forgets the default serves plaintext).
			if o.TLSConfig == nil || o.AllowNonTLS {
				t.Errorf("client TLS: config %v, allow_non_tls %v; want TLS, plaintext refused", o.TLSConfig != nil, o.AllowNonTLS)
			}
			equal(t, "PidFile", o.PidFile, render.PidFile)
			equal(t, "LameDuckDuration", o.LameDuckDuration, render.LameDuckDuration)
			equal(t, "LameDuckGracePeriod", o.LameDuckGracePeriod, render.LameDuckGracePeriod)
			checkRoutes(t, o, w)
			checkJetStream(t, got, w)
			checkAuth(t, got, w)
			if w.extra != nil {
				w.extra(t, o)
			}
			for ref, value := range got.secrets {
				if strings.Contains(got.text, value) {
					t.Errorf("the ConfigMap's nats.conf contains the value of Secret %s key %s", ref.name, ref.key)
				}
			}
		})
	}
}

// fillDefaults spells out the zero fields of w.
func fillDefaults(w confWant) confWant {
	if w.name == "" {
		w.name = "demo"
	}
	if w.replicas == 0 {
		w.replicas = 3
	}
	if w.claim == 0 {
		w.claim = 10 << 30
	}
	if w.mode == "" {
		w.mode = v1alpha1.AuthUsers
	}
	if w.appUser == "" {
		w.appUser = "nats"
	}
	if w.clientSecret == (secretRef{}) {
		key := "password"
		if w.mode == v1alpha1.AuthToken {
			key = "token"
		}
		w.clientSecret = secretRef{w.name + "-auth", key}
	}
	return w
}

func checkRoutes(t *testing.T, o *server.Options, w confWant) {
	t.Helper()
	if w.replicas < 2 {
		if len(o.Routes) != 0 || o.Cluster.Port != 0 {
			t.Errorf("one server: routes %v, cluster port %d; want no cluster at all", o.Routes, o.Cluster.Port)
		}
		return
	}
	equal(t, "Cluster.Name", o.Cluster.Name, w.name)
	equal(t, "Cluster.Port", o.Cluster.Port, render.ClusterPort)
	equal(t, "Cluster.NoAdvertise", o.Cluster.NoAdvertise, true)
	equal(t, "Cluster.Advertise", o.Cluster.Advertise, fmt.Sprintf("%s-0.%s-headless:6222", w.name, w.name))
	equal(t, "Cluster.Username", o.Cluster.Username, render.RouteUser)
	if o.Cluster.Password == "" {
		t.Error("routes accept any server: the cluster has no route password")
	}
	if len(o.Routes) != w.replicas {
		t.Fatalf("%d routes %v, want %d", len(o.Routes), o.Routes, w.replicas)
	}
	for i, u := range o.Routes {
		want := fmt.Sprintf("%s-%d.%s-headless:6222", w.name, i, w.name)
		password, _ := u.User.Password()
		if u.Scheme != "nats" || u.Host != want || u.User.Username() != render.RouteUser || password != o.Cluster.Password {
			t.Errorf("route %d is %s, want nats://%s with the route credentials", i, u.Redacted(), want)
		}
	}
	if w.noRouteTLS {
		if o.Cluster.TLSConfig != nil {
			t.Error("route TLS is off, yet the cluster block has TLS")
		}
		return
	}
	if o.Cluster.TLSConfig == nil || o.Cluster.TLSConfig.ClientAuth != tls.RequireAndVerifyClientCert || o.Cluster.TLSConfig.ClientCAs == nil {
		t.Errorf("routes are not mutual TLS: %+v", o.Cluster.TLSConfig)
	}
}

func checkJetStream(t *testing.T, got loadedConf, w confWant) {
	t.Helper()
	o := got.opts
	equal(t, "JetStream", o.JetStream, !w.noJS)
	if w.noJS {
		if strings.Contains(got.text, "jetstream") {
			t.Errorf("JetStream off, yet nats.conf mentions jetstream:\n%s", got.text)
		}
		return
	}
	equal(t, "StoreDir", o.StoreDir, render.StoreDir)
	equal(t, "JetStreamMaxStore", o.JetStreamMaxStore, render.FileStoreLimit(w.claim))
	equal(t, "JetStreamMaxMemory", o.JetStreamMaxMemory, w.maxMemory)
	equal(t, "JetStreamDomain", o.JetStreamDomain, w.domain)
}

func checkAuth(t *testing.T, got loadedConf, w confWant) {
	t.Helper()
	o := got.opts
	switch w.mode {
	case v1alpha1.AuthNone:
		if o.Authorization != "" || len(o.Users) != 0 || len(o.Nkeys) != 0 || len(o.Accounts) != 0 || o.SystemAccount != "" || o.NoAuthUser != "" {
			t.Errorf("mode none: token %q, %d users, %d nkeys, %d accounts, system account %q, no_auth_user %q; want no auth at all",
				o.Authorization, len(o.Users), len(o.Nkeys), len(o.Accounts), o.SystemAccount, o.NoAuthUser)
		}
	case v1alpha1.AuthToken:
		token, ok := got.secrets[w.clientSecret]
		if !ok {
			t.Fatalf("no env var reads Secret %s key %s", w.clientSecret.name, w.clientSecret.key)
		}
		equal(t, "Authorization", o.Authorization, token)
		if len(o.Users) != 0 || len(o.Accounts) != 0 || o.SystemAccount != "" {
			t.Errorf("mode token: %d users, %d accounts, system account %q; want none", len(o.Users), len(o.Accounts), o.SystemAccount)
		}
	default:
		equal(t, "Authorization", o.Authorization, "")
		equal(t, "SystemAccount", o.SystemAccount, render.SystemAccount)
		var accounts []string
		for _, a := range o.Accounts {
			accounts = append(accounts, a.Name)
		}
		slices.Sort(accounts)
		equal(t, "accounts", fmt.Sprint(accounts), "[APP SYS]")

		password, ok := got.secrets[w.clientSecret]
		if !ok {
			t.Fatalf("no env var reads Secret %s key %s", w.clientSecret.name, w.clientSecret.key)
		}
		system, ok := got.secrets[secretRef{w.name + "-system", "password"}]
		if !ok {
			t.Fatalf("no env var reads Secret %s-system key password", w.name)
		}
		want := map[string]string{
			w.appUser + "/" + password:       render.AppAccount,
			render.SystemUser + "/" + system: render.SystemAccount,
		}
		gotUsers := map[string]string{}
		for _, u := range o.Users {
			acc := ""
			if u.Account != nil {
				acc = u.Account.Name
			}
			gotUsers[u.Username+"/"+u.Password] = acc
		}
		equal(t, "users (name/password: account)", fmt.Sprint(gotUsers), fmt.Sprint(want))

		// The application account carries JetStream exactly when the server does.
		js, _ := lookupRaw(got.raw, "accounts", render.AppAccount, "jetstream").(string)
		equal(t, "APP account jetstream", js == "enabled", !w.noJS)
	}
}

// lookupRaw walks nested maps of a parsed nats.conf; nil when a key is missing.
func lookupRaw(m map[string]any, path ...string) any {
	var cur any = m
	for _, key := range path {
		asMap, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = asMap[key]
	}
	return cur
}

// equal reports a mismatch of one named field.
func equal[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// TestRestartHash checks what restarts the servers: the config-hash pod
// annotation changes only with settings a reload cannot apply.
func TestRestartHash(t *testing.T) {
	base := []func(*v1alpha1.NatsCluster){withReplicas(3)}
	for _, tc := range []struct {
		name        string
		change      []func(*v1alpha1.NatsCluster)
		wantRestart bool
	}{
		{"nothing", nil, false},
		{"3 to 5 replicas: routes reload", []func(*v1alpha1.NatsCluster){withReplicas(5)}, false},
		{"3 to 7 replicas: routes reload", []func(*v1alpha1.NatsCluster){withReplicas(7)}, false},
		{"max_payload reloads", []func(*v1alpha1.NatsCluster){withConfig("max_payload", "8388608")}, false},
		{"debug reloads", []func(*v1alpha1.NatsCluster){withConfig("debug", "true")}, false},
		{"user name reloads", []func(*v1alpha1.NatsCluster){withAuthUser("other")}, false},
		{"pod labels are not nats.conf", []func(*v1alpha1.NatsCluster){withPodTemplate(v1alpha1.PodTemplateSpec{Labels: map[string]string{"team": "x"}})}, false},
		{"1 to 3 replicas adds the cluster listener", []func(*v1alpha1.NatsCluster){withReplicas(1)}, true},
		{"fileStore size", []func(*v1alpha1.NatsCluster){withFileStoreSize("20Gi")}, true},
		{"memoryStore size", []func(*v1alpha1.NatsCluster){withMemoryStore("1Gi")}, true},
		{"JetStream domain", []func(*v1alpha1.NatsCluster){withDomain("hub")}, true},
		{"JetStream off", []func(*v1alpha1.NatsCluster){withJetStream(false)}, true},
		{"max_pending does not reload", []func(*v1alpha1.NatsCluster){withConfig("max_pending", "67108864")}, true},
		{"write_timeout does not reload", []func(*v1alpha1.NatsCluster){withConfig("write_timeout", `"close"`)}, true},
		{"max_subscriptions does not reload", []func(*v1alpha1.NatsCluster){withConfig("max_subscriptions", "1000")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := configHash(t, cluster(base...))
			after := configHash(t, cluster(append(slices.Clone(base), tc.change...)...))
			if restart := before != after; restart != tc.wantRestart {
				t.Errorf("hash %s -> %s: restart = %v, want %v", before, after, restart, tc.wantRestart)
			}
		})
	}
}

// TestRestartHashFollowsReloadable ties the hash to natsconf.Reloadable: a
// key changes the hash exactly when a reload cannot apply it.
func TestRestartHashFollowsReloadable(t *testing.T) {
	for _, tc := range []struct{ key, before, after string }{
		{"max_payload", "1048576", "8388608"},
		{"debug", "false", "true"},
		{"ping_interval", `"1m"`, `"2m"`},
		{"max_connections", "100", "200"},
		{"max_pending", "1048576", "2097152"},
		{"write_timeout", `"retry"`, `"close"`},
		{"max_subscriptions", "10", "20"},
		{"max_control_line", "4096", "8192"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			before := configHash(t, cluster(withConfig(tc.key, tc.before)))
			after := configHash(t, cluster(withConfig(tc.key, tc.after)))
			restart := before != after
			if restart == natsconf.Reloadable(tc.key) {
				t.Errorf("%s: hash changed = %v, but Reloadable = %v", tc.key, restart, natsconf.Reloadable(tc.key))
			}
		})
	}
}

func TestRestartHashIsShortHex(t *testing.T) {
	hash := configHash(t, cluster())
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(hash) {
		t.Errorf("config hash %q is not 16 hex digits", hash)
	}
}

// TestNatsConfModel checks NatsConf, the model behind the ConfigMap.
func TestNatsConfModel(t *testing.T) {
	for _, tc := range []struct {
		name        string
		in          *v1alpha1.NatsCluster
		wantAccount bool
		wantToken   bool
	}{
		{"users", cluster(withAuthMode(v1alpha1.AuthUsers)), true, false},
		{"token", cluster(withAuthMode(v1alpha1.AuthToken)), false, true},
		{"none", cluster(withAuthMode(v1alpha1.AuthNone)), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := render.NatsConf(tc.in.WithDefaults())
			if err != nil {
				t.Fatal(err)
			}
			equal(t, "has accounts", len(m.Accounts) > 0, tc.wantAccount)
			equal(t, "has token", m.Authorization != nil && !m.Authorization.Token.IsZero(), tc.wantToken)
			if err := m.Check(); err != nil {
				t.Errorf("natsconf Check: %v", err)
			}
		})
	}
}

// writeTestCertificates writes a CA and a certificate where the pod would
// mount them (routes/ and client/ under a stand-in for render.TLSDir).
func writeTestCertificates(t *testing.T) string {
	t.Helper()
	now := time.Now()
	ca, err := pki.NewCA("test", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := pki.Issue(ca, []string{"*.demo-headless"}, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, sub := range []string{"routes", "client"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string]string{render.TLSCertKey: leaf.Cert, render.TLSKeyKey: leaf.Key, render.TLSCAKey: ca.Cert} {
			if err := os.WriteFile(filepath.Join(dir, sub, name), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}
