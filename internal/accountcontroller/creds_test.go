package accountcontroller

import (
	"bytes"
	"testing"

	"github.com/nats-io/nkeys"

	"github.com/kubenats/kubenats/internal/accounts"
)

// TestCredsSeedOutlivesTheKeyPair: the seed read from a creds file still
// signs after the parse is done. Careless variant caught: returning the
// key pair's own bytes, which its Wipe zeroes (a re-issue with the same
// key then fails, and a rotation never completes).
func TestCredsSeedOutlivesTheKeyPair(t *testing.T) {
	seed, _ := accounts.NewSeed(nkeys.PrefixByteUser)
	pub, _ := accounts.PublicKey(seed, nkeys.PrefixByteUser)
	account, _ := accounts.NewSeed(nkeys.PrefixByteAccount)
	accountPub, _ := accounts.PublicKey(account, nkeys.PrefixByteAccount)
	claims, _ := accounts.UserClaims(accounts.User{Name: "u", PublicKey: pub, Account: accountPub})
	userJWT, err := accounts.Sign(claims, account)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := accounts.Creds(userJWT, seed)
	if err != nil {
		t.Fatal(err)
	}
	got, key := credsSeed(creds)
	if key != pub {
		t.Fatalf("key %s, want %s", key, pub)
	}
	if again, err := accounts.PublicKey(got, nkeys.PrefixByteUser); err != nil || again != pub {
		t.Fatalf("the returned seed no longer reads: %v", err)
	}
	if _, key := credsSeed([]byte("not a creds file")); key != "" {
		t.Fatal("a key from a non-creds file")
	}
	// A creds Secret is its namespace's to edit: past maxCreds it is not
	// parsed at all, however valid its end.
	padded := append(bytes.Repeat([]byte("\n"), maxCreds), creds...)
	if _, key := credsSeed(padded); key != "" {
		t.Fatal("an oversized creds file was parsed")
	}
}
