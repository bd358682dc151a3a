package render_test

import (
	"net/url"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// secretKeys lists each Secret's name with its sorted keys.
func secretKeys(secrets []*corev1.Secret) map[string][]string {
	out := map[string][]string{}
	for _, s := range secrets {
		k := keys(s.StringData)
		slices.Sort(k)
		out[s.Name] = k
	}
	return out
}

func TestSecretsPerAuthMode(t *testing.T) {
	cred := render.Credentials{Client: "clientValue", System: "systemValue"}
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
		want map[string][]string
	}{
		{"users", cluster(), map[string][]string{
			"demo-routes": {"password", "urls"},
			"demo-auth":   {"password"},
			"demo-system": {"password"},
			"demo-users":  {"users.conf"},
			"demo-client": {"password", "servers", "url", "user"},
		}},
		{"users with a secretRef", cluster(withAuthSecret("mine", "pw")), map[string][]string{
			"demo-routes": {"password", "urls"},
			"demo-system": {"password"},
			"demo-users":  {"users.conf"},
			"demo-client": {"password", "servers", "url", "user"},
		}},
		{"token", cluster(withAuthMode(v1alpha1.AuthToken)), map[string][]string{
			"demo-routes": {"password", "urls"},
			"demo-auth":   {"token"},
			"demo-client": {"servers", "token", "url"},
		}},
		{"token with a secretRef", cluster(withAuthMode(v1alpha1.AuthToken), withAuthSecret("tok", "value")), map[string][]string{
			"demo-routes": {"password", "urls"},
			"demo-client": {"servers", "token", "url"},
		}},
		{"none", cluster(withAuthMode(v1alpha1.AuthNone)), map[string][]string{
			"demo-routes": {"password", "urls"},
			"demo-client": {"servers", "url"},
		}},
		{"one server has no routes", cluster(withReplicas(1)), map[string][]string{
			"demo-auth":   {"password"},
			"demo-system": {"password"},
			"demo-users":  {"users.conf"},
			"demo-client": {"password", "servers", "url", "user"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.in.WithDefaults()
			secrets := render.Secrets(c, cred)
			if got := secretKeys(secrets); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Secrets = %v, want %v", got, tc.want)
			}
			for _, s := range secrets {
				equal(t, s.Name+" type", s.Type, corev1.SecretTypeOpaque)
				equal(t, s.Name+" namespace", s.Namespace, "ns")
				equal(t, s.Name+" kind", s.Kind, "Secret")
			}
			// The API server's defaults change nothing: the controller may
			// call Secrets with the object as stored.
			if undefaulted := secretKeys(render.Secrets(tc.in, cred)); !reflect.DeepEqual(undefaulted, tc.want) {
				t.Errorf("Secrets of the undefaulted cluster = %v, want %v", undefaulted, tc.want)
			}
		})
	}
}

func TestSecretValues(t *testing.T) {
	cred := render.Credentials{Client: "clientValue", System: "systemValue", Route: "routeValue"}
	routes := map[string]string{"password": "routeValue", "urls": `["nats://kubenats-route:routeValue@demo-0.demo-headless:6222", ` +
		`"nats://kubenats-route:routeValue@demo-1.demo-headless:6222", "nats://kubenats-route:routeValue@demo-2.demo-headless:6222"]`}
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
		want map[string]map[string]string
	}{
		{"users", cluster(), map[string]map[string]string{
			"demo-auth":   {"password": "clientValue"},
			"demo-system": {"password": "systemValue"},
			"demo-client": {"user": "nats", "password": "clientValue", "servers": "tls://demo.ns.svc:4222", "url": "tls://nats:clientValue@demo.ns.svc:4222"},
			"demo-routes": routes,
		}},
		{"users with a custom user", cluster(withAuthUser("app")), map[string]map[string]string{
			"demo-auth":   {"password": "clientValue"},
			"demo-system": {"password": "systemValue"},
			"demo-client": {"user": "app", "password": "clientValue", "servers": "tls://demo.ns.svc:4222", "url": "tls://app:clientValue@demo.ns.svc:4222"},
			"demo-routes": routes,
		}},
		{"token", cluster(withAuthMode(v1alpha1.AuthToken)), map[string]map[string]string{
			"demo-auth":   {"token": "clientValue"},
			"demo-client": {"token": "clientValue", "servers": "tls://demo.ns.svc:4222", "url": "tls://clientValue@demo.ns.svc:4222"},
			"demo-routes": routes,
		}},
		{"none", cluster(withAuthMode(v1alpha1.AuthNone)), map[string]map[string]string{
			"demo-client": {"servers": "tls://demo.ns.svc:4222", "url": "tls://demo.ns.svc:4222"},
			"demo-routes": routes,
		}},
		{"client TLS: tls:// URLs and the CA", cluster(withClientTLS("my-tls")), map[string]map[string]string{
			"demo-auth":   {"password": "clientValue"},
			"demo-system": {"password": "systemValue"},
			"demo-client": {"user": "nats", "password": "clientValue", "servers": "tls://demo.ns.svc:4222", "url": "tls://nats:clientValue@demo.ns.svc:4222", "ca.crt": "CA PEM"},
			"demo-routes": routes,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cred := cred
			if tc.in.Spec.TLS.Client != nil && tc.in.Spec.TLS.Client.SecretName != "" {
				cred.ClientCA = "CA PEM"
			}
			got := map[string]map[string]string{}
			for _, s := range render.Secrets(tc.in.WithDefaults(), cred) {
				got[s.Name] = s.StringData
			}
			// users.conf has tests of its own (users_test.go): here, that
			// it is made from the same values.
			if users, ok := got["demo-users"]; ok {
				want, _, _ := render.UsersConf(tc.in.WithDefaults(), cred)
				equal(t, "users.conf", users["users.conf"], want)
				delete(got, "demo-users")
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Secrets = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCredentialsURLEscapes: any character in a user's own password must
// survive the URL, and the servers key never carries credentials.
func TestCredentialsURLEscapes(t *testing.T) {
	for _, tc := range []struct {
		name           string
		in             *v1alpha1.NatsCluster
		user, password string
		secret         string
	}{
		{"password with @ : /", cluster(withAuthSecret("mine", "pw")), "nats", "p@ss:w/rd", "p@ss:w/rd"},
		{"password with ? # % and space", cluster(), "nats", "a?b#c%d e", "a?b#c%d e"},
		{"user with a dot and dash", cluster(withAuthUser("app.user-1")), "app.user-1", "x@y", "x@y"},
		{"token with @ and /", cluster(withAuthMode(v1alpha1.AuthToken)), "t@k/en:1", "", "t@k/en:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.in.WithDefaults()
			creds := find[*corev1.Secret](t, secretObjects(render.Secrets(c, render.Credentials{Client: tc.secret, System: "sys"})), "demo-client")
			u, err := url.Parse(creds.StringData[render.CredentialsURLKey])
			if err != nil {
				t.Fatalf("url %q does not parse: %v", creds.StringData[render.CredentialsURLKey], err)
			}
			equal(t, "scheme", u.Scheme, "tls")
			equal(t, "host", u.Host, "demo.ns.svc:4222")
			equal(t, "path", u.Path, "")
			if u.User == nil {
				t.Fatal("url has no userinfo")
			}
			equal(t, "user", u.User.Username(), tc.user)
			pw, hasPW := u.User.Password()
			equal(t, "password", pw, tc.password)
			equal(t, "has password", hasPW, tc.password != "")

			servers, err := url.Parse(creds.StringData[render.CredentialsServersKey])
			if err != nil {
				t.Fatal(err)
			}
			if servers.User != nil {
				t.Errorf("servers %q carries credentials", servers)
			}
			equal(t, "servers", servers.String(), render.InternalURL(c))
		})
	}
}

// secretObjects converts Secrets for find.
func secretObjects(secrets []*corev1.Secret) []client.Object {
	out := make([]client.Object, len(secrets))
	for i, s := range secrets {
		out[i] = s
	}
	return out
}

// TestServerEnvReadsTheRightSecrets checks every env var that reads a Secret
// names the Secret and key the mode calls for, and that Secret exists.
func TestServerEnvReadsTheRightSecrets(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
		want map[string]secretRef
	}{
		{"users", cluster(), map[string]secretRef{
			"NATS_ROUTE_PASSWORD": {"demo-routes", "password"},
			"NATS_ROUTE_URLS":     {"demo-routes", "urls"},
		}},
		{"users with a secretRef", cluster(withAuthSecret("mine", "pw")), map[string]secretRef{
			"NATS_ROUTE_PASSWORD": {"demo-routes", "password"},
			"NATS_ROUTE_URLS":     {"demo-routes", "urls"},
		}},
		{"users with a secretRef and no key", cluster(withAuthSecret("mine", "")), map[string]secretRef{
			"NATS_ROUTE_PASSWORD": {"demo-routes", "password"},
			"NATS_ROUTE_URLS":     {"demo-routes", "urls"},
		}},
		{"token", cluster(withAuthMode(v1alpha1.AuthToken)), map[string]secretRef{
			"NATS_ROUTE_PASSWORD": {"demo-routes", "password"},
			"NATS_ROUTE_URLS":     {"demo-routes", "urls"},
			"NATS_TOKEN":          {"demo-auth", "token"},
		}},
		{"token with a secretRef", cluster(withAuthMode(v1alpha1.AuthToken), withAuthSecret("tok", "value")), map[string]secretRef{
			"NATS_ROUTE_PASSWORD": {"demo-routes", "password"},
			"NATS_ROUTE_URLS":     {"demo-routes", "urls"},
			"NATS_TOKEN":          {"tok", "value"},
		}},
		{"none", cluster(withAuthMode(v1alpha1.AuthNone)), map[string]secretRef{
			"NATS_ROUTE_PASSWORD": {"demo-routes", "password"},
			"NATS_ROUTE_URLS":     {"demo-routes", "urls"},
		}},
		{"one server has no route credentials, and in mode users no password in its environment", cluster(withReplicas(1)), map[string]secretRef{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := secretEnv(serverContainerOf(t, tc.in))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("secret env = %v, want %v", got, tc.want)
			}
			c := tc.in.WithDefaults()
			rendered := map[secretRef]bool{}
			for _, s := range render.Secrets(c, render.Credentials{Client: "c", System: "s", Route: "r"}) {
				for k := range s.StringData {
					rendered[secretRef{s.Name, k}] = true
				}
			}
			for name, ref := range got {
				if user := c.Spec.Auth.SecretRef; user != nil && user.Name == ref.name {
					continue // the user's own Secret
				}
				if !rendered[ref] {
					t.Errorf("env %s reads Secret %s key %s, which Secrets does not make", name, ref.name, ref.key)
				}
			}
			if n := len(podSpecOf(t, tc.in).Containers); n != 1 {
				t.Errorf("%d containers: the server should be alone in its pod", n)
			}
		})
	}
}
