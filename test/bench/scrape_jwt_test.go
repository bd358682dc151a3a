package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// jwtTrust is an operator, its system account and n JetStream accounts
// with limits, as spec.auth.mode jwt runs a server: the accounts' JWTs
// preloaded into a memory resolver, one user each to put streams in them.
type jwtTrust struct {
	token   string // the operator's JWT
	system  string
	users   []nats.Option     // a user of each account
	preload map[string]string // public key -> JWT, system account included
}

// claims are the JWTs a key signs.
type claims interface {
	Encode(nkeys.KeyPair) (string, error)
}

func newJWTTrust(b testing.TB, n int) *jwtTrust {
	b.Helper()
	op := mustKey(b, nkeys.CreateOperator)
	t := &jwtTrust{preload: map[string]string{}}
	sign := func(c claims, with nkeys.KeyPair) string {
		token, err := c.Encode(with)
		if err != nil {
			b.Fatal(err)
		}
		return token
	}
	sysKey := mustKey(b, nkeys.CreateAccount)
	t.system = publicKey(b, sysKey)
	sys := jwt.NewAccountClaims(t.system)
	sys.Name = "SYS"
	t.preload[t.system] = sign(sys, op)
	oc := jwt.NewOperatorClaims(publicKey(b, op))
	oc.SystemAccount = t.system
	t.token = sign(oc, op)
	for i := range n {
		key := mustKey(b, nkeys.CreateAccount)
		pub := publicKey(b, key)
		ac := jwt.NewAccountClaims(pub)
		ac.Name = fmt.Sprintf("bench/app-%03d", i)
		// Together the limits fit this machine's disk and memory:
		// nats-server turns JetStream off for an account whose limits
		// do not fit what is left.
		ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: 8 << 20, DiskStorage: 64 << 20, Streams: jwt.NoLimit, Consumer: jwt.NoLimit}
		t.preload[pub] = sign(ac, op)

		userKey := mustKey(b, nkeys.CreateUser)
		uc := jwt.NewUserClaims(publicKey(b, userKey))
		seed, err := userKey.Seed()
		if err != nil {
			b.Fatal(err)
		}
		t.users = append(t.users, nats.UserJWTAndSeed(sign(uc, key), string(seed)))
	}
	return t
}

// config is the server configuration that trusts t, written into dir.
func (t *jwtTrust) config(b testing.TB, dir string) string {
	b.Helper()
	var conf strings.Builder
	fmt.Fprintf(&conf, "operator: %q\nsystem_account: %q\nresolver: MEMORY\nresolver_preload: {\n", t.token, t.system)
	for pub, token := range t.preload {
		fmt.Fprintf(&conf, "  %s: %q\n", pub, token)
	}
	conf.WriteString("}\n")
	path := filepath.Join(dir, "trust.conf")
	if err := os.WriteFile(path, []byte(conf.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

func mustKey(b testing.TB, create func() (nkeys.KeyPair, error)) nkeys.KeyPair {
	b.Helper()
	kp, err := create()
	if err != nil {
		b.Fatal(err)
	}
	return kp
}

func publicKey(b testing.TB, kp nkeys.KeyPair) string {
	b.Helper()
	pub, err := kp.PublicKey()
	if err != nil {
		b.Fatal(err)
	}
	return pub
}
