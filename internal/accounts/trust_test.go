package accounts

import (
	"strings"
	"testing"

	"github.com/nats-io/jwt/v2"
)

// TestNewTrustIsConsistent: the operator JWT names the system account,
// the system user is of the system account and signed by its signing key,
// and CheckTrust accepts what NewTrust made and refuses it edited.
func TestNewTrustIsConsistent(t *testing.T) {
	data, err := NewTrust("nats")
	if err != nil {
		t.Fatal(err)
	}
	oc, err := jwt.DecodeOperatorClaims(data[OperatorJWTKey])
	if err != nil || oc.SystemAccount != data[SystemPublicKey] || oc.Name != "nats" {
		t.Fatalf("operator claims %+v, %v", oc, err)
	}
	sys, err := jwt.DecodeAccountClaims(data[SystemJWTKey])
	if err != nil || sys.Subject != data[SystemPublicKey] || sys.Issuer != oc.Subject {
		t.Fatalf("system account claims %+v, %v", sys, err)
	}
	uc, err := jwt.DecodeUserClaims(data[SystemUserJWTKey])
	if err != nil || uc.IssuerAccount != sys.Subject || !sys.SigningKeys.Contains(uc.Issuer) {
		t.Fatalf("system user issued by %s for %s, want the system account's signing key: %v", uc.Issuer, uc.IssuerAccount, err)
	}
	asBytes := func(m map[string]string) map[string][]byte {
		out := map[string][]byte{}
		for k, v := range m {
			out[k] = []byte(v)
		}
		return out
	}
	if err := CheckTrust(asBytes(data)); err != nil {
		t.Fatal(err)
	}
	other, _ := NewTrust("nats")
	for _, tc := range []struct {
		name, key, value, want string
	}{
		{"a key missing", OperatorSeedKey, "", "lacks operator.seed"},
		{"a user seed for the operator", OperatorSeedKey, data[SystemUserSeedKey], "a seed of another kind"},
		{"another system account", SystemPublicKey, other[SystemPublicKey], "is not its"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := asBytes(data)
			d[tc.key] = []byte(tc.value)
			err := CheckTrust(d)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckTrust: %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "SO") || strings.Contains(err.Error(), "SU") {
				t.Fatalf("the error shows a seed: %v", err)
			}
		})
	}
}
