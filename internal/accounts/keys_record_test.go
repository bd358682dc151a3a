package accounts

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"strings"
	"testing"
)

// TestKeysSecretNameCarriesTheWholeDigest: the keys Secret's name holds
// the full SHA-256 of namespace/name, and fits a Secret's name with the
// longest cluster name. Careless variant caught (run): the 48-bit digest
// of before (sum[:6]), whose collisions a tenant finds in under a minute.
func TestKeysSecretNameCarriesTheWholeDigest(t *testing.T) {
	ref := AccountRef{Namespace: "team-a", Name: "orders"}
	sum := sha256.Sum256([]byte("team-a/orders"))
	cluster := strings.Repeat("c", 52) // the longest NatsCluster name
	name := KeysSecretName(cluster, ref)
	if name != cluster+"-account-"+hex.EncodeToString(sum[:]) {
		t.Fatalf("name %s does not carry the full digest", name)
	}
	if len(name) > 253 {
		t.Fatalf("name of %d characters does not fit a Secret", len(name))
	}
	if name == LegacyKeysSecretName(cluster, ref) {
		t.Fatal("the full name is the legacy one")
	}
}

// TestReadAccountKeysForHoldsKeysToTheirAccount: keys are read only for
// exactly the account (namespace, name and public key) their Secret
// records. Careless variants caught (each run): no check at all (the keys
// found by name are used, which is the collision of issue 35), the name
// checked but not the namespace, the record's public key not compared
// with the seed's (a seed put beside another account's record), the
// status's key ignored.
func TestReadAccountKeysForHoldsKeysToTheirAccount(t *testing.T) {
	victim := AccountRef{Namespace: "team-a", Name: "orders"}
	k, err := NewAccountKeys(victim)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewAccountKeys(victim)
	for _, tc := range []struct {
		name  string
		ref   AccountRef
		known string
		edit  func(map[string][]byte)
		ok    bool
	}{
		{name: "its own account", ref: victim, ok: true},
		{name: "its own account, as its status names it", ref: victim, known: k.PublicKey, ok: true},
		{name: "another namespace's account of the same name", ref: AccountRef{Namespace: "team-b", Name: "orders"}},
		{name: "another account of the namespace", ref: AccountRef{Namespace: "team-a", Name: "billing"}},
		{name: "a status naming another key", ref: victim, known: other.PublicKey},
		{name: "no record", ref: victim, edit: func(d map[string][]byte) { delete(d, AccountRecordKey) }},
		{name: "a record that is not JSON", ref: victim, edit: func(d map[string][]byte) { d[AccountRecordKey] = []byte("{") }},
		{name: "a record past its bound", ref: victim, edit: func(d map[string][]byte) {
			d[AccountRecordKey] = []byte(`{"namespace":"team-a","name":"orders","publicKey":"` + k.PublicKey + `","x":"` + strings.Repeat("x", maxRecord) + `"}`)
		}},
		{name: "another account's seed beside this record", ref: victim, edit: func(d map[string][]byte) {
			d[AccountSeedKey] = other.Seed
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := maps.Clone(k.Data())
			if tc.edit != nil {
				tc.edit(d)
			}
			got, err := ReadAccountKeysFor(tc.ref, tc.known, d)
			if tc.ok {
				if err != nil || got.PublicKey != k.PublicKey || got.Account != victim {
					t.Fatalf("read %s for %v: %v", got.PublicKey, got.Account, err)
				}
				return
			}
			if !errors.Is(err, ErrKeysOfAnotherAccount) {
				t.Fatalf("read for %v: %v, want ErrKeysOfAnotherAccount", tc.ref, err)
			}
			if strings.Contains(err.Error(), string(k.Seed)) {
				t.Fatal("the error shows a seed")
			}
		})
	}
}

// TestAdoptLegacyKeysOnlyForTheAccountThatMadeThem: a Secret under the
// legacy name is taken over only by the account its annotation names and
// its status's key is; the account whose legacy name merely collides
// with it gets nothing (and so keys of its own). Careless variants
// caught (each run): adopting whatever sits under the legacy name (the
// collision hands the victim's keys over), the annotation checked but
// not the status's key.
func TestAdoptLegacyKeysOnlyForTheAccountThatMadeThem(t *testing.T) {
	victim := AccountRef{Namespace: "team-a", Name: "orders"}
	attacker := AccountRef{Namespace: "team-x", Name: "collides"}
	k, _ := NewAccountKeys(victim)
	legacy := k.Data()
	delete(legacy, AccountRecordKey) // as versions before the record wrote it
	other, _ := NewAccountKeys(victim)

	got, err := AdoptLegacyKeys(victim, victim.String(), k.PublicKey, legacy)
	if err != nil || got.PublicKey != k.PublicKey || got.Account != victim {
		t.Fatalf("the account that made them: %v", err)
	}
	if back, err := ReadAccountKeysFor(victim, k.PublicKey, got.Data()); err != nil || back.SigningKey != k.SigningKey {
		t.Fatalf("migrated keys do not read back for their account: %v", err)
	}
	if _, err := AdoptLegacyKeys(victim, victim.String(), "", legacy); err != nil {
		t.Fatalf("the account that made them, its status lost: %v", err)
	}
	for name, call := range map[string]func() error{
		"the colliding account": func() error {
			_, err := AdoptLegacyKeys(attacker, victim.String(), "", legacy)
			return err
		},
		"the colliding account, claiming the victim's key in its status": func() error {
			_, err := AdoptLegacyKeys(attacker, victim.String(), k.PublicKey, legacy)
			return err
		},
		"the named account, its status naming another key": func() error {
			_, err := AdoptLegacyKeys(victim, victim.String(), other.PublicKey, legacy)
			return err
		},
		"no annotation": func() error {
			_, err := AdoptLegacyKeys(victim, "", "", legacy)
			return err
		},
	} {
		if err := call(); !errors.Is(err, ErrKeysOfAnotherAccount) {
			t.Errorf("%s: %v, want ErrKeysOfAnotherAccount", name, err)
		}
	}
}
