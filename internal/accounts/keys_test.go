package accounts

import (
	"strings"
	"testing"

	"github.com/nats-io/nkeys"
)

// TestAccountKeysRoundTrip: keys written to a Secret read back the same,
// revocations included; a revocation is never moved later or dropped.
// Careless variants caught: revocations not written into the data (the
// next JWT would forget them), a re-revoked user getting the later time
// (its JWTs issued in between would come back to life).
func TestAccountKeysRoundTrip(t *testing.T) {
	k, err := NewAccountKeys(teamA)
	if err != nil {
		t.Fatal(err)
	}
	user, _ := NewSeed(nkeys.PrefixByteUser)
	pub, _ := PublicKey(user, nkeys.PrefixByteUser)
	k, changed, err := k.Revoke([]string{pub}, 100)
	if err != nil || !changed {
		t.Fatalf("revoke: changed %v, %v", changed, err)
	}
	if _, changed, _ := k.Revoke([]string{pub}, 200); changed {
		t.Fatal("revoking a revoked user again changed the keys")
	}
	back, err := ReadAccountKeysFor(teamA, "", k.Data())
	if err != nil {
		t.Fatal(err)
	}
	if back.PublicKey != k.PublicKey || back.SigningKey != k.SigningKey || back.Revoked[pub] != 100 {
		t.Fatalf("read back %+v, wrote %+v", back.Revoked, k.Revoked)
	}
	if !strings.HasPrefix(back.PublicKey, "A") || back.PublicKey == back.SigningKey {
		t.Fatalf("identity %s, signing %s: want two account keys", back.PublicKey, back.SigningKey)
	}
}

// TestReadAccountKeysRefusesWhatItDidNotWrite: a keys Secret edited by hand
// is refused, naming the key and never showing a value.
func TestReadAccountKeysRefusesWhatItDidNotWrite(t *testing.T) {
	k, _ := NewAccountKeys(teamA)
	userSeed, _ := NewSeed(nkeys.PrefixByteUser)
	for name, edit := range map[string]func(map[string][]byte){
		"a user seed as the account's": func(d map[string][]byte) { d[AccountSeedKey] = userSeed },
		"no signing seed":              func(d map[string][]byte) { delete(d, AccountSigningSeedKey) },
		"revocations not JSON":         func(d map[string][]byte) { d[AccountRevocationsKey] = []byte("[") },
		"a revoked account key":        func(d map[string][]byte) { d[AccountRevocationsKey] = []byte(`{"` + k.PublicKey + `":1}`) },
	} {
		d := k.Data()
		edit(d)
		_, err := ReadAccountKeysFor(teamA, "", d)
		if err == nil {
			t.Errorf("%s: read without error", name)
			continue
		}
		if strings.Contains(err.Error(), string(k.Seed)) || strings.Contains(err.Error(), string(userSeed)) {
			t.Errorf("%s: the error shows a seed", name)
		}
	}
}

// TestKeysSecretNameIsPerAccount: two accounts of one name in two
// namespaces get two Secrets.
func TestKeysSecretNameIsPerAccount(t *testing.T) {
	a := KeysSecretName("nats", AccountRef{Namespace: "team-a", Name: "app"})
	b := KeysSecretName("nats", AccountRef{Namespace: "team-b", Name: "app"})
	if a == b || !strings.HasPrefix(a, "nats-account-") {
		t.Fatalf("names %s and %s", a, b)
	}
}

// TestRotateKeepsThePreviousKeyUntilEveryUserIsReissued: a rotation makes
// a new signing key and keeps the old one; the old one goes only once the
// grace is over and every user is re-issued; a request answered once is
// not answered again. Careless variants caught: dropping the old key at
// once (every connected client of the account disconnected), dropping it
// with a user not re-issued (that user locked out), rotating again on
// every pass (the annotation is still there).
func TestRotateKeepsThePreviousKeyUntilEveryUserIsReissued(t *testing.T) {
	k, _ := NewAccountKeys(teamA)
	rotated, changed, err := k.Rotate("r1", 100)
	if err != nil || !changed {
		t.Fatalf("rotate: %v %v", changed, err)
	}
	if rotated.SigningKey == k.SigningKey || rotated.PreviousSigningKey != k.SigningKey {
		t.Fatalf("signing %s previous %s, was %s", rotated.SigningKey, rotated.PreviousSigningKey, k.SigningKey)
	}
	if string(rotated.OperatorCreds) == string(k.OperatorCreds) {
		t.Fatal("the operator's own user was not re-issued with the new key")
	}
	if _, again, _ := rotated.Rotate("r1", 200); again {
		t.Fatal("the same request rotated twice")
	}
	back, err := ReadAccountKeysFor(teamA, "", rotated.Data())
	if err != nil || back.PreviousSigningKey != k.SigningKey || back.Rotation.For != "r1" || back.Rotation.PreviousUntil != 100 {
		t.Fatalf("read back %+v: %v", back.Rotation, err)
	}
	if _, dropped := back.DropPrevious(99, true); dropped {
		t.Fatal("dropped before the grace was over")
	}
	if _, dropped := back.DropPrevious(100, false); dropped {
		t.Fatal("dropped with a user not re-issued")
	}
	done, dropped := back.DropPrevious(100, true)
	if !dropped || done.PreviousSigningKey != "" || len(done.Data()[AccountPreviousSigningSeedKey]) != 0 {
		t.Fatal("not dropped once the grace was over and every user re-issued")
	}
}
