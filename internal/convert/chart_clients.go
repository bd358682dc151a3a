package convert

// The chart's client side: authorization and TLS, carried into the
// NatsCluster's auth and tls.client, credentials into a labelled Secret.

import (
	"fmt"
	"path"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsconf"
	"github.com/kubenats/kubenats/internal/render"
)

// authorization carries one client user (user and password, or a token)
// into a Secret of its own: the chart wrote it in clear into its
// ConfigMap. It reports whether clients must authenticate.
func (t *chartTranslation) authorization(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		t.lose("nats.conf authorization", "not a block")
		return true
	}
	auth := &t.cluster.Spec.Auth
	secret := t.release.sts.Name + "-client-auth"
	var user, password, token string
	for _, key := range sortedKeys(m) {
		switch val := m[key]; key {
		case "user":
			user = fmt.Sprint(val)
		case "password":
			password = fmt.Sprint(val)
		case "token":
			token = fmt.Sprint(val)
		case "users":
			list, _ := val.([]any)
			if len(list) != 1 {
				t.lose("nats.conf authorization.users", "kubenats runs one client user in auth mode users; several users, with permissions, are NatsUsers in auth mode jwt (docs/accounts.md)")
				continue
			}
			one, _ := list[0].(map[string]any)
			for _, k := range sortedKeys(one) {
				switch k {
				case "user":
					user = fmt.Sprint(one[k])
				case "password":
					password = fmt.Sprint(one[k])
				default:
					t.lose("nats.conf authorization.users[0]."+k, "a user's permissions are a NatsUser's, in auth mode jwt (docs/accounts.md)")
				}
			}
		case "timeout":
			// nats-server's own default is used.
		default:
			t.lose("nats.conf authorization."+key, "kubenats has no field for it")
		}
	}
	switch {
	case token != "" && user == "":
		if t.credentialTaken("token", token) {
			auth.Mode = v1alpha1.AuthToken
			auth.SecretRef = &v1alpha1.SecretKeyRef{Name: secret, Key: "token"}
			t.secret(secret, "token", token)
		}
	case user != "" && password != "" && token == "":
		if !userName.MatchString(user) {
			t.lose("nats.conf authorization user", "kubenats takes a user name of letters, digits, '_', '.' and '-', beginning with a letter")
			break
		}
		if t.credentialTaken("password", password) {
			auth.Mode, auth.User = v1alpha1.AuthUsers, user
			auth.SecretRef = &v1alpha1.SecretKeyRef{Name: secret, Key: "password"}
			t.secret(secret, "password", password)
		}
	default:
		t.lose("nats.conf authorization", "kubenats takes one user and password, or one token")
	}
	return true
}

// userName is the API's pattern of spec.auth.user.
var userName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// credentialTaken reports whether the operator can pass value to the
// servers as it passes a user's Secret (natsconf.CheckEnvString), and
// names it as lost when not; the message never quotes the value.
func (t *chartTranslation) credentialTaken(key, value string) bool {
	if err := natsconf.CheckEnvString(value); err != nil {
		t.lose("nats.conf authorization "+key, "kubenats would refuse it ("+err.Error()+"): choose another, and give it to the clients")
		return false
	}
	return true
}

// secret writes a credential into a Secret labelled for kubenats.
func (t *chartTranslation) secret(name, key, value string) {
	s := t.release.sts
	t.secrets = append(t.secrets, &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace,
			Labels: map[string]string{v1alpha1.SecretAllowLabel: "true"}},
		StringData: map[string]string{key: value},
	})
}

// clientTLS carries the client certificate: the Secret mounted where
// cert_file lies, whose keys kubenats reads as tls.crt, tls.key (and
// ca.crt for verify).
func (t *chartTranslation) clientTLS(v any, c *corev1.Container) {
	m, ok := v.(map[string]any)
	if !ok {
		t.lose("nats.conf tls", "not a block")
		return
	}
	tls := &v1alpha1.ClientTLSSpec{}
	files := map[string]string{}
	for _, key := range sortedKeys(m) {
		switch val := m[key]; key {
		case "cert_file", "key_file", "ca_file":
			files[key] = fmt.Sprint(val)
		case "verify":
			tls.Verify = val == true
		case "handshake_first":
			tls.HandshakeFirst = val == true
		case "timeout":
		default:
			t.lose("nats.conf tls."+key, "kubenats has no field for it")
		}
	}
	secret, dir := t.secretMountedAt(c, path.Dir(files["cert_file"]))
	want := map[string]string{"cert_file": render.TLSCertKey, "key_file": render.TLSKeyKey, "ca_file": render.TLSCAKey}
	for _, key := range []string{"cert_file", "key_file", "ca_file"} {
		f, ok := files[key]
		switch {
		case !ok && key == "ca_file":
		case !ok:
			t.lose("nats.conf tls", "a certificate needs cert_file and key_file")
			return
		case secret == "" || path.Dir(f) != dir:
			t.lose("nats.conf tls."+key, "not in a Secret mounted in the nats container: put the certificate in a Secret and name it in spec.tls.client.secretName")
			return
		case path.Base(f) != want[key]:
			t.lose("nats.conf tls."+key, fmt.Sprintf("kubenats reads the Secret's %s, not the file nats.conf names: copy the Secret with those keys", want[key]))
			return
		}
	}
	tls.SecretName = secret
	t.cluster.Spec.TLS.Client = tls
}

// secretMountedAt is the Secret mounted at dir in c, and dir cleaned.
func (t *chartTranslation) secretMountedAt(c *corev1.Container, dir string) (string, string) {
	dir = path.Clean(dir)
	for _, m := range c.VolumeMounts {
		if path.Clean(m.MountPath) != dir {
			continue
		}
		for _, v := range t.release.sts.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.Secret != nil {
				return v.Secret.SecretName, dir
			}
		}
	}
	return "", dir
}
