package accounts

import (
	"strings"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// accountSignedBy is an account JWT signed with seed, decoded again.
func accountSignedBy(t *testing.T, seed []byte) *jwt.AccountClaims {
	t.Helper()
	acct, _ := NewSeed(nkeys.PrefixByteAccount)
	pub, _ := PublicKey(acct, nkeys.PrefixByteAccount)
	text, err := Sign(jwt.NewAccountClaims(pub), seed)
	if err != nil {
		t.Fatal(err)
	}
	c, err := jwt.DecodeAccountClaims(text)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// trusts reports whether the operator JWT in values takes an account
// JWT signed with seed, as nats-server decides (the issuer is the
// operator or one of its signing keys).
func trusts(t *testing.T, values map[string]string, seed []byte) bool {
	t.Helper()
	oc, err := jwt.DecodeOperatorClaims(values[OperatorJWTKey])
	if err != nil {
		t.Fatal(err)
	}
	return oc.DidSign(accountSignedBy(t, seed))
}

func checkValues(t *testing.T, values map[string]string) {
	t.Helper()
	data := map[string][]byte{}
	for k, v := range values {
		data[k] = []byte(v)
	}
	if err := CheckTrust(data); err != nil {
		t.Fatalf("CheckTrust: %v", err)
	}
}

// TestOperatorKeyRotationKeepsEveryAccountTrusted walks a rotation step
// by step: at each step every account signed by the key that signs now,
// or by the one it replaces until the drop, is taken by the operator JWT
// of that step, and of the step before (servers restart into each one at
// a time). After the drop the old key's accounts are refused.
// Careless variants it catches: a rotation in one step (the next key
// signing before the servers list it: "the operator JWT of the step
// before refuses ..."), a promote that forgets the replaced key
// ("... refuses the previous key's accounts").
func TestOperatorKeyRotationKeepsEveryAccountTrusted(t *testing.T) {
	v0, err := NewTrust("ns/nats")
	if err != nil {
		t.Fatal(err)
	}
	checkValues(t, v0)
	s1, pub1, err := OperatorSigner(v0)
	if err != nil || string(s1) == v0[OperatorSeedKey] {
		t.Fatalf("a new trust signs with the operator's own key: %v", err)
	}
	if !trusts(t, v0, s1) || v0[OperatorSigningKeysKey] != pub1 {
		t.Fatalf("the operator JWT does not list the signing key %s: mark %q", pub1, v0[OperatorSigningKeysKey])
	}

	v1, err := BeginOperatorRotation(v0, RotationRequest("one"))
	if err != nil {
		t.Fatal(err)
	}
	checkValues(t, v1)
	next := []byte(v1[OperatorNextSeedKey])
	if s, _, _ := OperatorSigner(v1); string(s) != string(s1) {
		t.Fatal("begin changed the key that signs: servers not restarted yet would refuse its accounts")
	}
	if !trusts(t, v1, s1) || !trusts(t, v1, next) || len(strings.Split(v1[OperatorSigningKeysKey], ",")) != 2 {
		t.Fatalf("after begin the operator JWT must list both keys: mark %q", v1[OperatorSigningKeysKey])
	}
	if v1[OperatorRotationKey] != RotationRequest("one") {
		t.Fatal("the request is not recorded")
	}

	v2, err := PromoteOperatorKey(v1)
	if err != nil {
		t.Fatal(err)
	}
	checkValues(t, v2)
	s2, pub2, _ := OperatorSigner(v2)
	switch {
	case string(s2) != string(next):
		t.Fatal("promote did not make the next key the signing key")
	case v2[OperatorJWTKey] != v1[OperatorJWTKey] || v2[OperatorSigningKeysKey] != v1[OperatorSigningKeysKey]:
		t.Fatal("promote changed the operator JWT: the servers would restart for nothing")
	case !trusts(t, v2, s1):
		t.Fatal("after promote the operator JWT refuses the previous key's accounts")
	case v2[OperatorPreviousKey] != pub1:
		t.Fatalf("previous is %q, want the public key %s", v2[OperatorPreviousKey], pub1)
	}
	if trusts(t, v0, s2) {
		t.Fatal("the key that signs now was trusted before the rotation began")
	}

	v3, err := DropPreviousOperatorKey(v2)
	if err != nil {
		t.Fatal(err)
	}
	checkValues(t, v3)
	switch {
	case trusts(t, v3, s1):
		t.Fatal("after the drop the old key's accounts are still taken")
	case !trusts(t, v3, s2) || !trusts(t, v2, s2):
		t.Fatal("the new key's accounts are refused by the operator JWT of the drop, or of the step before")
	case v3[OperatorSigningKeysKey] != pub2:
		t.Fatalf("mark %q, want %s alone", v3[OperatorSigningKeysKey], pub2)
	}
	oc, _ := jwt.DecodeOperatorClaims(v3[OperatorJWTKey])
	if oc.Name != "ns/nats" || oc.SystemAccount != v0[SystemPublicKey] {
		t.Fatalf("the operator JWT lost its name or system account: %+v", oc)
	}
}

// TestOperatorKeyRotationFromATrustWithoutSigningKeys: a trust Secret made
// before signing keys (the operator's own key signs the accounts) is
// valid, and its first rotation ends with the new key signing, the
// operator's own key still trusted and nothing to drop.
func TestOperatorKeyRotationFromATrustWithoutSigningKeys(t *testing.T) {
	v0, err := NewTrust("nats")
	if err != nil {
		t.Fatal(err)
	}
	delete(v0, OperatorSigningSeedKey)
	if err := resignOperator(v0); err != nil {
		t.Fatal(err)
	}
	checkValues(t, v0)
	if s, _, _ := OperatorSigner(v0); string(s) != v0[OperatorSeedKey] || v0[OperatorSigningKeysKey] != "" {
		t.Fatal("without a signing key the operator's own key signs, and no key is listed")
	}
	v1, err := BeginOperatorRotation(v0, RotationRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	v2, err := PromoteOperatorKey(v1)
	if err != nil {
		t.Fatal(err)
	}
	checkValues(t, v2)
	s, _, _ := OperatorSigner(v2)
	if string(s) != v1[OperatorNextSeedKey] || v2[OperatorPreviousKey] != "" || !trusts(t, v2, []byte(v0[OperatorSeedKey])) {
		t.Fatal("the first rotation of an old trust must end at the promote, the operator's own key still trusted")
	}
}

// TestCheckTrustRefusesEditedOperatorKeys: a trust Secret whose keys do
// not match its operator JWT is refused, naming the key, never a value.
func TestCheckTrustRefusesEditedOperatorKeys(t *testing.T) {
	v, _ := NewTrust("nats")
	rotating, _ := BeginOperatorRotation(v, RotationRequest("a"))
	other, _ := NewTrust("nats")
	stranger, _ := NewSeed(nkeys.PrefixByteOperator)
	for _, tc := range []struct {
		name string
		edit func(map[string]string)
		want string
	}{
		{"another operator's JWT", func(m map[string]string) { m[OperatorJWTKey] = other[OperatorJWTKey] }, "is not its operator.seed's"},
		{"a signing key the JWT does not list", func(m map[string]string) { m[OperatorSigningSeedKey] = string(stranger) }, "lists other signing keys"},
		{"a next key the JWT does not list", func(m map[string]string) { m[OperatorNextSeedKey] = string(stranger) }, "lists other signing keys"},
		{"the mark edited", func(m map[string]string) { m[OperatorSigningKeysKey] = "" }, "is not the keys it holds"},
		{"a user seed as signing key", func(m map[string]string) { m[OperatorSigningSeedKey] = v[SystemUserSeedKey] }, "a seed of another kind"},
		{"next and previous at once", func(m map[string]string) {
			for k, x := range rotating {
				m[k] = x
			}
			m[OperatorPreviousKey] = other[OperatorSigningKeysKey]
		}, "holds both"},
		{"not a JWT", func(m map[string]string) { m[OperatorJWTKey] = "eyJ.x.y" }, "is not an operator JWT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string]string{}
			for k, x := range v {
				m[k] = x
			}
			tc.edit(m)
			data := map[string][]byte{}
			for k, x := range m {
				data[k] = []byte(x)
			}
			err := CheckTrust(data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckTrust: %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "SO") || strings.Contains(err.Error(), "SU") {
				t.Fatalf("the error shows a seed: %v", err)
			}
		})
	}
}
