package convert

import (
	"fmt"
	"strings"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// A NACK Account is a connection profile: servers, and Secrets holding
// TLS files and one credential, under key names the Account chooses.
// kubenats reads fixed keys (ca.crt, tls.crt, tls.key; creds, nkey, token,
// user and password), so a Secret is carried when its keys are those.

// accountConnection is the kubenats connection an Account describes, what
// of it is lost, and the Secrets it uses (namespace/name).
func accountConnection(obj nackObject) (v1alpha1.Connection, []Loss, []string) {
	var (
		conn    v1alpha1.Connection
		lost    []Loss
		secrets []string
	)
	note := func(field, why string) { lost = append(lost, Loss{obj.id(), field, why}) }
	use := func(name string) { secrets = append(secrets, obj.Metadata.Namespace+"/"+name) }
	for _, k := range sortedKeys(obj.Spec) {
		switch k {
		case "servers":
			good, bad := urls(obj.Spec[k])
			conn.Servers = good
			for _, s := range bad {
				note("spec.servers", fmt.Sprintf("%q: kubenats takes nats:// or tls:// URLs without credentials or a path", s))
			}
		case "name":
			// The Account's own name, in the NACK versions that had it:
			// the resources name the Account by its Kubernetes name.
		case "tls":
			secret, keys := secretAndKeys(obj.Spec[k], "ca", "cert", "key")
			if secret == "" {
				note("spec.tls", "no Secret named")
				continue
			}
			if want := []string{"ca.crt", "tls.crt", "tls.key"}; !keysAre(keys, want) {
				note("spec.tls", fmt.Sprintf("Secret %s holds the files under %s; kubenats reads %s: copy them to those keys", secret, strings.Join(keys, ", "), strings.Join(want, ", ")))
				continue
			}
			conn.TLSSecretRef = &v1alpha1.LocalRef{Name: secret}
			use(secret)
		case "creds", "token", "user":
			fieldKeys := map[string][]string{"creds": {"file"}, "token": {"token"}, "user": {"user", "password"}}[k]
			want := map[string][]string{"creds": {"creds"}, "token": {"token"}, "user": {"user", "password"}}[k]
			secret, keys := secretAndKeys(obj.Spec[k], fieldKeys...)
			switch {
			case secret == "":
				note("spec."+k, "no Secret named")
			case !keysAre(keys, want):
				note("spec."+k, fmt.Sprintf("Secret %s holds it under %s; kubenats reads %s: copy it to that key", secret, strings.Join(keys, ", "), strings.Join(want, ", ")))
			case conn.CredentialsSecretRef != nil && conn.CredentialsSecretRef.Name != secret:
				note("spec."+k, fmt.Sprintf("kubenats takes one credentials Secret, and %s is already used", conn.CredentialsSecretRef.Name))
			default:
				conn.CredentialsSecretRef = &v1alpha1.LocalRef{Name: secret}
				use(secret)
			}
		default:
			note("spec."+k, "not a NACK "+NACKGroupVersion+" Account field kubenats knows")
		}
	}
	return conn, lost, secrets
}

// secretAndKeys reads {secret: {name}, <keyFields>...}: the Secret's name
// and, for each key field, the key it names (the kubenats key when unset,
// reported as "").
func secretAndKeys(v any, keyFields ...string) (string, []string) {
	m, _ := v.(map[string]any)
	ref, _ := m["secret"].(map[string]any)
	name, _ := ref["name"].(string)
	keys := make([]string, len(keyFields))
	for i, f := range keyFields {
		keys[i], _ = m[f].(string)
	}
	return name, keys
}

// keysAre: each key is the one kubenats reads, or unset.
func keysAre(keys, want []string) bool {
	for i, k := range keys {
		if k != "" && k != want[i] {
			return false
		}
	}
	return true
}
