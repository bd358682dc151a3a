package accounts

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/kubenats/kubenats/internal/natsconf"
	"github.com/kubenats/kubenats/test/testnats"
)

// trustFixture is a NATS operator with its system account and the
// operator's own system user, made as the controller makes them.
type trustFixture struct {
	opSeed, sysSeed, sysSigning []byte
	sysPub                      string
	trust                       natsconf.Trust
	sysCreds                    string
}

func newTrust(t *testing.T) *trustFixture {
	t.Helper()
	f := &trustFixture{opSeed: seed(t, nkeys.PrefixByteOperator), sysSeed: seed(t, nkeys.PrefixByteAccount),
		sysSigning: seed(t, nkeys.PrefixByteAccount)}
	opPub := pub(t, f.opSeed, nkeys.PrefixByteOperator)
	f.sysPub = pub(t, f.sysSeed, nkeys.PrefixByteAccount)
	opJWT := must[string](t)(Sign(OperatorClaims("test", opPub, f.sysPub), f.opSeed))
	sysJWT := must[string](t)(Sign(SystemAccountClaims(f.sysPub, pub(t, f.sysSigning, nkeys.PrefixByteAccount)), f.opSeed))
	f.trust = natsconf.Trust{OperatorJWT: opJWT, SystemAccount: f.sysPub, SystemAccountJWT: sysJWT, ResolverDir: t.TempDir()}
	f.sysCreds = userCreds(t, User{Name: "kubenats-system", Account: f.sysPub}, f.sysSigning)
	return f
}

// startServer runs a nats-server from nats.conf as natsconf writes it in
// mode jwt, its resolver and store in dirs that outlive a restart.
func (f *trustFixture) startServer(t *testing.T, port int, store string) *server.Server {
	t.Helper()
	conf := natsconf.Config{Port: port, JetStream: &natsconf.JetStream{StoreDir: store}, Trust: &f.trust}
	text, err := conf.Render()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, text, 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server refuses nats.conf: %v\n%s", err, text)
	}
	return testnats.Start(t, port, func(o *server.Options) {
		*o = *loaded
		o.Host, o.NoLog, o.NoSigs = "127.0.0.1", true, true
	})
}

// push sends an account JWT as the operator's system user.
func (f *trustFixture) push(t *testing.T, url, accountJWT string) {
	t.Helper()
	nc := connect(t, url, f.sysCreds)
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := Push(ctx, nc, accountJWT, []string{nc.ConnectedServerName()}); err != nil {
		t.Fatal(err)
	}
}

// account is a NatsAccount's keys, signed as the controller signs it.
type account struct {
	ref             AccountRef
	seed, signing   []byte
	pub, signingPub string
}

func newAccount(t *testing.T, ref AccountRef) *account {
	a := &account{ref: ref, seed: seed(t, nkeys.PrefixByteAccount), signing: seed(t, nkeys.PrefixByteAccount)}
	a.pub, a.signingPub = pub(t, a.seed, nkeys.PrefixByteAccount), pub(t, a.signing, nkeys.PrefixByteAccount)
	return a
}

func (f *trustFixture) sign(t *testing.T, a Account, peers map[AccountRef]Peer, signers map[AccountRef]*account) string {
	t.Helper()
	c, acts, _ := AccountClaims(a, peers)
	return must[string](t)(SignAccount(c, acts, f.opSeed, func(r AccountRef) ([]byte, string, bool) {
		s, ok := signers[r]
		if !ok {
			return nil, "", false
		}
		return s.signing, s.pub, true
	}))
}

// userCreds is a creds file of a new user of account (public key), signed
// with signer, written to a file.
func userCreds(t *testing.T, u User, signer []byte) string {
	t.Helper()
	us := seed(t, nkeys.PrefixByteUser)
	u.PublicKey = pub(t, us, nkeys.PrefixByteUser)
	claims, err := UserClaims(u)
	if err != nil {
		t.Fatal(err)
	}
	creds := must[[]byte](t)(Creds(must[string](t)(Sign(claims, signer)), us))
	path := filepath.Join(t.TempDir(), "user.creds")
	if err := os.WriteFile(path, creds, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func connect(t *testing.T, url, creds string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := dial(url, creds, opts...)
	if err != nil {
		t.Fatalf("connect with %s: %v", filepath.Base(creds), err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func dial(url, creds string, opts ...nats.Option) (*nats.Conn, error) {
	return nats.Connect(url, append([]nats.Option{nats.UserCredentials(creds), nats.NoReconnect(),
		nats.Timeout(3 * time.Second), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})}, opts...)...)
}

func seed(t *testing.T, kind nkeys.PrefixByte) []byte { return must[[]byte](t)(NewSeed(kind)) }

func pub(t *testing.T, s []byte, kind nkeys.PrefixByte) string {
	return must[string](t)(PublicKey(s, kind))
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func writeFile(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
