package e2e_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/e2ekit"
)

// TestJWTModeServesPushedAccounts: a three-server NatsCluster in auth mode
// jwt becomes Ready on the loopback cluster; its servers refuse a client
// without credentials, take the operator's system user from the trust
// Secret, and take an account JWT pushed once through the system account
// while they run: every server answers the push, and a user of that
// account then connects to each and carries a message, with no server
// restarted (the pod UIDs unchanged).
// Careless variants: nats.conf without the resolver (the push gets no
// answer), users-mode accounts left beside the operator (the client
// without credentials would get in as no one's user of APP).
func TestJWTModeServesPushedAccounts(t *testing.T) {
	e2ekit.Parallel(t, 45*time.Second)
	ns := namespace(t)
	diagnoseOnFailure(t, ns)
	f := formNamed(t, ns, "nats", func(s *v1alpha1.NatsClusterSpec) {
		s.Auth.Mode = v1alpha1.AuthJWT
	})
	uids := podUIDs(t, ns, f.Pods)
	url := "tls://" + f.IP(f.Pods[0]) + ":4222"
	ca := addrTLS(t, f)

	// NATS speaks first: the refusal is the server's -ERR, not a hang.
	if _, err := connect(t, url, nats.Name("e2e-nobody"), ca); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization violation") {
		t.Fatalf("a client without credentials: %v, want the server's authorization violation", err)
	}

	trust := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: f.Cluster.TrustSecretName()}}
	get(t, trust)
	sys := systemUser(t, f, f.Pods[0], trust)

	user := pushedAccountUser(t, f, sys, trust.Data[render.TrustOperatorSeedKey])
	for _, p := range f.Pods {
		app, err := connect(t, "tls://"+f.IP(p)+":4222", user, ca)
		if err != nil {
			t.Fatalf("a user of the pushed account on %s: %v", p, err)
		}
		sub, err := app.SubscribeSync("hello")
		if err != nil {
			t.Fatal(err)
		}
		if err := app.Publish("hello", []byte("world")); err != nil {
			t.Fatal(err)
		}
		if m, err := sub.NextMsg(5 * time.Second); err != nil || string(m.Data) != "world" {
			t.Fatalf("round trip on %s: %v", p, err)
		}
	}
	if got := podUIDs(t, ns, f.Pods); !maps.Equal(got, uids) {
		t.Fatalf("servers replaced: pod UIDs %v, were %v", got, uids)
	}
}

// pushedAccountUser makes an account of its own, as the account
// controller makes one, signed with operatorSeed (the operator's own key
// or one of its signing keys), pushes it through sys (the operator's
// system user) until every server of f answered that it took it, and
// returns a user of that account. Taking a JWT is not trusting it: a
// server stores a JWT of an issuer it does not trust and answers "jwt
// updated" all the same; only its users' connections tell.
func pushedAccountUser(t *testing.T, f *formed, sys *nats.Conn, operatorSeed []byte) nats.Option {
	t.Helper()
	seed, _ := accounts.NewSeed(nkeys.PrefixByteAccount)
	signing, _ := accounts.NewSeed(nkeys.PrefixByteAccount)
	pub, _ := accounts.PublicKey(seed, nkeys.PrefixByteAccount)
	signingPub, _ := accounts.PublicKey(signing, nkeys.PrefixByteAccount)
	claims, _, _ := accounts.AccountClaims(accounts.Account{Ref: accounts.AccountRef{Namespace: f.NS, Name: "team"},
		PublicKey: pub, SigningKey: signingPub}, nil)
	accountJWT, err := accounts.Sign(claims, operatorSeed)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
	defer cancel()
	if took, err := accounts.Push(ctx, sys, accountJWT, f.Pods); err != nil || took != len(f.Pods) {
		t.Fatalf("push: %d servers took it: %v", took, err)
	}
	userSeed, _ := accounts.NewSeed(nkeys.PrefixByteUser)
	userPub, _ := accounts.PublicKey(userSeed, nkeys.PrefixByteUser)
	uc, _ := accounts.UserClaims(accounts.User{Name: f.NS + "/app", PublicKey: userPub, Account: pub})
	userJWT, err := accounts.Sign(uc, signing)
	if err != nil {
		t.Fatal(err)
	}
	return nats.UserJWTAndSeed(userJWT, string(userSeed))
}

// systemUser connects to pod of f as the operator's system user, from
// the trust Secret.
func systemUser(t *testing.T, f *formed, pod string, trust *corev1.Secret) *nats.Conn {
	t.Helper()
	sys, err := connect(t, "tls://"+f.IP(pod)+":4222", addrTLS(t, f),
		nats.UserJWTAndSeed(string(trust.Data[render.TrustSystemUserJWTKey]), string(trust.Data[render.TrustSystemUserSeedKey])))
	if err != nil {
		t.Fatalf("the operator's system user: %v", err)
	}
	return sys
}

// podUIDs are the UIDs of the named pods: a replaced pod has a new one.
func podUIDs(t *testing.T, ns string, pods []string) map[string]types.UID {
	t.Helper()
	out := map[string]types.UID{}
	for _, name := range pods {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		get(t, p)
		out[name] = p.UID
	}
	return out
}
