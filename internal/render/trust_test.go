package render_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
	"github.com/kubenats/kubenats/internal/render"
)

// TestJWTModeConf: in mode jwt nats.conf trusts the cluster's operator,
// names its system account and runs the full resolver on the JetStream
// claim; it has no accounts block and no password. nats-server's own
// option processing reads it (the resolver directory moved to a scratch
// one: it creates that directory). Careless variants: the users mode's
// accounts left beside the operator (nats-server ignores them, a client
// of APP would still get in), or a resolver dir off the claim (the JWTs
// would not outlive a pod).
func TestJWTModeConf(t *testing.T) {
	trust, err := accounts.NewTrust("ns/nats")
	if err != nil {
		t.Fatal(err)
	}
	// One server: the route TLS files exist only in a pod.
	c := cluster(withAuthMode(v1alpha1.AuthJWT), withReplicas(1))
	conf, err := render.ConfWith(c, render.Inputs{Trust: trust})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(render.ResolverDir, render.StoreDir+"/") {
		t.Fatalf("resolver dir %s is not on the claim %s", render.ResolverDir, render.StoreDir)
	}
	for _, absent := range []string{"accounts {", "include", "$" + render.EnvPassword, "$" + render.EnvSystemPassword} {
		if strings.Contains(conf.Text, absent) {
			t.Errorf("nats.conf of mode jwt has %q:\n%s", absent, conf.Text)
		}
	}
	text := strings.ReplaceAll(conf.Text, `"`+render.ResolverDir+`"`, `"`+t.TempDir()+`"`)
	text = strings.ReplaceAll(text, "$"+render.EnvServerName, "nats-0")
	t.Setenv(render.EnvZoneTag, `"zone:a"`)
	t.Setenv(render.EnvRegionTag, `"region:r"`)
	text = strings.ReplaceAll(text, render.TLSDir+"/", writeTestCertificates(t)+"/")
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server refuses nats.conf of mode jwt: %v\n%s", err, conf.Text)
	}
	if len(o.TrustedOperators) != 1 || o.SystemAccount != trust[accounts.SystemPublicKey] {
		t.Fatalf("operators %d, system account %q", len(o.TrustedOperators), o.SystemAccount)
	}
	// The accounts' signing key is trusted, and each server reports it
	// (the mark a rotation waits for).
	_, signer, _ := accounts.OperatorSigner(trust)
	if keys := o.TrustedOperators[0].SigningKeys; len(keys) != 1 || keys[0] != signer {
		t.Fatalf("the operator's signing keys %v, want %s", keys, signer)
	}
	if got := o.Metadata[render.MetadataOperatorKeysKey]; got != signer {
		t.Fatalf("server metadata %s = %q, want %s", render.MetadataOperatorKeysKey, got, signer)
	}
	if _, ok := o.AccountResolver.(*server.DirAccResolver); !ok {
		t.Fatalf("resolver %T, want the full resolver", o.AccountResolver)
	}
	if len(o.Accounts) != 0 || len(o.Users) != 0 {
		t.Fatalf("accounts %d users %d beside the operator", len(o.Accounts), len(o.Users))
	}
}

// TestJWTModeKeepsSeedsInTheTrustSecret: no seed reaches an object but the
// trust Secret, and no pod mounts that Secret. Careless variant: the
// operator JWT and its seed side by side in the ConfigMap.
func TestJWTModeKeepsSeedsInTheTrustSecret(t *testing.T) {
	trust, err := accounts.NewTrust("ns/nats")
	if err != nil {
		t.Fatal(err)
	}
	c := cluster(withAuthMode(v1alpha1.AuthJWT))
	objs, err := render.Objects(c, render.Inputs{Trust: trust})
	if err != nil {
		t.Fatal(err)
	}
	seeds := []string{trust[accounts.OperatorSeedKey], trust[accounts.SystemSeedKey], trust[accounts.SystemSigningSeedKey], trust[accounts.SystemUserSeedKey]}
	for _, obj := range objs {
		raw, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		b := string(raw)
		for _, s := range seeds {
			if strings.Contains(b, s) || strings.Contains(b, s[:10]) {
				t.Errorf("%T %s carries a seed", obj, obj.GetName())
			}
		}
		if strings.Contains(b, c.TrustSecretName()) {
			t.Errorf("%T %s refers to the trust Secret", obj, obj.GetName())
		}
	}
	var found bool
	for _, s := range render.Secrets(c, render.Credentials{Trust: trust}) {
		if s.Name == c.TrustSecretName() {
			found = s.StringData[accounts.OperatorSeedKey] == trust[accounts.OperatorSeedKey]
		}
		if s.Name == c.CredentialsSecretName() && (s.StringData[render.CredentialsPasswordKey] != "" || strings.Contains(s.StringData[render.CredentialsURLKey], "@")) {
			t.Errorf("the credentials Secret of mode jwt carries a password: %v", s.StringData)
		}
	}
	if !found {
		t.Fatal("no trust Secret with the operator's seed")
	}
}
