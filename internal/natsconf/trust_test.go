package natsconf

import (
	"strings"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// trustFor is a Trust with a real operator and system account JWT.
func trustFor(t *testing.T, dir string) *Trust {
	t.Helper()
	op, _ := nkeys.CreateOperator()
	sys, _ := nkeys.CreateAccount()
	opPub, _ := op.PublicKey()
	sysPub, _ := sys.PublicKey()
	oc := jwt.NewOperatorClaims(opPub)
	oc.SystemAccount = sysPub
	opJWT, err := oc.Encode(op)
	if err != nil {
		t.Fatal(err)
	}
	sysJWT, err := jwt.NewAccountClaims(sysPub).Encode(op)
	if err != nil {
		t.Fatal(err)
	}
	return &Trust{OperatorJWT: opJWT, SystemAccount: sysPub, SystemAccountJWT: sysJWT, ResolverDir: dir}
}

// TestTrustLoadsAsTheFullResolver: nats.conf of mode jwt, read by
// nats-server's own option processing, trusts the operator, names the
// system account, and runs the full resolver in the directory given with
// the system account preloaded. Careless variants: the resolver of type
// mem (nothing pushed survives a restart) or no preload (the server
// cannot take a push through an account it does not know).
func TestTrustLoadsAsTheFullResolver(t *testing.T) {
	dir := t.TempDir()
	trust := trustFor(t, dir)
	text, err := (&Config{Port: 4222, Trust: trust}).Render()
	if err != nil {
		t.Fatal(err)
	}
	o := &server.Options{}
	if err := o.ProcessConfigString(string(text)); err != nil {
		t.Fatalf("nats-server refuses:\n%s\n%v", text, err)
	}
	if len(o.TrustedOperators) != 1 || o.SystemAccount != trust.SystemAccount {
		t.Fatalf("operators %d, system account %q", len(o.TrustedOperators), o.SystemAccount)
	}
	if _, ok := o.AccountResolver.(*server.DirAccResolver); !ok {
		t.Fatalf("resolver = %T, want the full (directory) resolver", o.AccountResolver)
	}
	if !strings.Contains(string(text), "type: full") || !strings.Contains(string(text), `dir: "`+dir+`"`) {
		t.Fatalf("resolver block:\n%s", text)
	}
	if !strings.Contains(string(text), "resolver_preload {\n  "+trust.SystemAccount) {
		t.Fatalf("system account not preloaded:\n%s", text)
	}
	if err := (&Config{Port: 4222, Trust: trust}).Check(); err != nil {
		t.Fatalf("Check refuses the operator's own trust block: %v", err)
	}
}

// TestTrustRefusesWhatItCannotWrite: no seed, no non-JWT, and no users
// beside the trust block reach a file.
func TestTrustRefusesWhatItCannotWrite(t *testing.T) {
	good := trustFor(t, "/data/jwt")
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"a seed for the operator JWT", func(c *Config) { c.Trust.OperatorJWT = "SOAB" + strings.Repeat("C", 54) }, "operator JWT is not a JWT"},
		{"a quote in the system account", func(c *Config) { c.Trust.SystemAccount = `A"` }, "not an account public key"},
		{"a relative resolver dir", func(c *Config) { c.Trust.ResolverDir = "jwt" }, "must be absolute"},
		{"accounts beside it", func(c *Config) { c.Accounts = []Account{{Name: "APP"}} }, "excludes authorization, accounts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := *good
			c := &Config{Port: 4222, Trust: &tr}
			tc.edit(c)
			_, err := c.Render()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Render: %v, want %q", err, tc.want)
			}
		})
	}
}
