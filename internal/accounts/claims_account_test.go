package accounts

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nats-io/jwt/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

const (
	pubA = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	pubB = "ABBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
	sigB = "ASBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
)

var (
	teamA = AccountRef{"team-a", "orders"}
	teamB = AccountRef{"team-b", "billing"}
)

func TestAccountLimits(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	for _, tc := range []struct {
		name string
		in   v1alpha1.AccountLimits
		want jwt.OperatorLimits
	}{
		{"unset is unlimited and JetStream off", v1alpha1.AccountLimits{},
			limitsWith(func(l *jwt.OperatorLimits) {})},
		{"connections, subscriptions and payload", v1alpha1.AccountLimits{
			Connections: ptr.To[int64](3), Subscriptions: ptr.To[int64](100), Payload: ptr.To[int64](1024)},
			limitsWith(func(l *jwt.OperatorLimits) { l.Conn, l.Subs, l.Payload = 3, 100, 1024 })},
		{"JetStream on: unset fields unlimited", v1alpha1.AccountLimits{
			JetStream: &v1alpha1.AccountJetStreamLimits{DiskStorage: q("1Mi")}},
			limitsWith(func(l *jwt.OperatorLimits) {
				l.DiskStorage, l.MemoryStorage, l.Streams, l.Consumer = 1<<20, -1, -1, -1
			})},
		{"JetStream with every limit", v1alpha1.AccountLimits{
			JetStream: &v1alpha1.AccountJetStreamLimits{DiskStorage: q("1Gi"), MemoryStorage: q("64Mi"),
				Streams: ptr.To[int64](2), Consumers: ptr.To[int64](5)}},
			limitsWith(func(l *jwt.OperatorLimits) {
				l.DiskStorage, l.MemoryStorage, l.Streams, l.Consumer = 1<<30, 64<<20, 2, 5
			})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := AccountClaims(Account{Ref: teamA, PublicKey: pubA, Spec: v1alpha1.NatsAccountSpec{Limits: tc.in}}, nil)
			if !reflect.DeepEqual(c.Limits, tc.want) {
				t.Fatalf("limits = %+v\nwant     %+v", c.Limits, tc.want)
			}
		})
	}
}

// limitsWith is NewAccountClaims' limits (unlimited, JetStream off) edited.
func limitsWith(edit func(*jwt.OperatorLimits)) jwt.OperatorLimits {
	l := jwt.NewAccountClaims(pubA).Limits
	edit(&l)
	return l
}

// TestImportOnlyWhenExported: an import reaches the JWT only when its
// exporter exports that subject and type to the importing account. The
// careless variants: trusting the importer's word (every import written),
// matching the exporter's `to` by name without its namespace (team-x's
// "billing" would get team-b's export), and a private export written
// without the activation token the servers ask for.
func TestImportOnlyWhenExported(t *testing.T) {
	imp := v1alpha1.AccountImport{Account: v1alpha1.AccountRef{Name: "orders", Namespace: "team-a"},
		Subject: "orders.>", Type: v1alpha1.ExportStream, LocalSubject: "a.orders.>"}
	exp := func(to ...v1alpha1.AccountRef) v1alpha1.AccountExport {
		return v1alpha1.AccountExport{Subject: "orders.>", Type: v1alpha1.ExportStream, To: to}
	}
	for _, tc := range []struct {
		name       string
		exports    []v1alpha1.AccountExport
		peers      bool
		wantImport bool
		wantToken  bool
		refused    string
	}{
		{"no such exporter", nil, false, false, false, "is not on this cluster"},
		{"not exported", nil, true, false, false, "does not export stream orders.> to this account"},
		{"exported to another account", []v1alpha1.AccountExport{exp(v1alpha1.AccountRef{Name: "other", Namespace: "team-b"})}, true, false, false, "does not export"},
		{"exported to the same name in another namespace", []v1alpha1.AccountExport{exp(v1alpha1.AccountRef{Name: "billing", Namespace: "team-x"})}, true, false, false, "does not export"},
		{"exported to the same name in the exporter's namespace", []v1alpha1.AccountExport{exp(v1alpha1.AccountRef{Name: "billing"})}, true, false, false, "does not export"},
		{"exported as a service, imported as a stream", []v1alpha1.AccountExport{{Subject: "orders.>", Type: v1alpha1.ExportService, Public: true}}, true, false, false, "does not export"},
		{"exported to this account", []v1alpha1.AccountExport{exp(v1alpha1.AccountRef{Name: "billing", Namespace: "team-b"})}, true, true, true, ""},
		{"public", []v1alpha1.AccountExport{{Subject: "orders.>", Type: v1alpha1.ExportStream, Public: true}}, true, true, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peers := map[AccountRef]Peer{}
			if tc.peers {
				peers[teamA] = Peer{PublicKey: pubA, Exports: tc.exports}
			}
			b := Account{Ref: teamB, PublicKey: pubB, SigningKey: sigB,
				Spec: v1alpha1.NatsAccountSpec{Imports: []v1alpha1.AccountImport{imp}}}
			c, acts, refused := AccountClaims(b, peers)
			if got := len(c.Imports) == 1; got != tc.wantImport {
				t.Fatalf("import written = %v, want %v (refused %+v)", got, tc.wantImport, refused)
			}
			if tc.refused != "" && (len(refused) != 1 || !strings.Contains(refused[0].Reason, tc.refused)) {
				t.Fatalf("refused = %+v, want one with %q", refused, tc.refused)
			}
			if tc.wantImport {
				got := c.Imports[0]
				if got.Account != pubA || got.Subject != "orders.>" || got.LocalSubject != "a.orders.>" {
					t.Fatalf("import = %+v", got)
				}
			}
			if got := len(acts) == 1; got != tc.wantToken {
				t.Fatalf("activation = %v, want %v", got, tc.wantToken)
			}
			if tc.wantToken {
				a := acts[0]
				if a.Exporter != teamA || a.Claims.Subject != pubB || a.Claims.ImportSubject != "orders.>" || a.Claims.ImportType != jwt.Stream {
					t.Fatalf("activation = %+v for %+v", a, a.Claims)
				}
			}
		})
	}
}

// TestExportsArePrivateUnlessPublic: an export naming its accounts asks
// the servers for a token (TokenReq); without it, the servers would let
// every account import it. Careless variant: TokenReq left false.
func TestExportsArePrivateUnlessPublic(t *testing.T) {
	a := Account{Ref: teamA, PublicKey: pubA, Spec: v1alpha1.NatsAccountSpec{Exports: []v1alpha1.AccountExport{
		{Subject: "orders.>", Type: v1alpha1.ExportStream, To: []v1alpha1.AccountRef{{Name: "billing", Namespace: "team-b"}}},
		{Subject: "prices.get", Type: v1alpha1.ExportService, Public: true, ResponseType: "Stream"},
	}}}
	c, _, _ := AccountClaims(a, nil)
	if len(c.Exports) != 2 {
		t.Fatalf("exports = %+v", c.Exports)
	}
	if !c.Exports[0].TokenReq || c.Exports[0].Type != jwt.Stream {
		t.Errorf("private export = %+v, want a stream that needs a token", c.Exports[0])
	}
	if c.Exports[1].TokenReq || c.Exports[1].Type != jwt.Service || c.Exports[1].ResponseType != jwt.ResponseTypeStream {
		t.Errorf("public export = %+v, want a service of streamed responses, no token", c.Exports[1])
	}
}

// TestAccountCarriesSigningKeyAndRevocations: users are signed by the
// signing key the account lists, and revoked users are refused from the
// time given. Careless variant: revocations kept in the operator's memory
// and never written into the JWT (a restarted server would take them).
func TestAccountCarriesSigningKeyAndRevocations(t *testing.T) {
	c, _, _ := AccountClaims(Account{Ref: teamB, PublicKey: pubB, SigningKey: sigB,
		Revoked: map[string]int64{"UREVOKED": 1700000000}}, nil)
	if !c.SigningKeys.Contains(sigB) {
		t.Errorf("signing keys = %v, want %s", c.SigningKeys.Keys(), sigB)
	}
	if c.Revocations["UREVOKED"] != 1700000000 {
		t.Errorf("revocations = %v", c.Revocations)
	}
	if c.Name != "team-b/billing" || c.Subject != pubB {
		t.Errorf("name %q subject %q", c.Name, c.Subject)
	}
}

// TestImportFromItselfRefused: an account cannot import from itself.
func TestImportFromItselfRefused(t *testing.T) {
	a := Account{Ref: teamA, PublicKey: pubA, Spec: v1alpha1.NatsAccountSpec{
		Exports: []v1alpha1.AccountExport{{Subject: "x", Type: v1alpha1.ExportStream, Public: true}},
		Imports: []v1alpha1.AccountImport{{Account: v1alpha1.AccountRef{Name: "orders"}, Subject: "x", Type: v1alpha1.ExportStream}}}}
	c, _, refused := AccountClaims(a, map[AccountRef]Peer{teamA: {PublicKey: pubA, Exports: a.Spec.Exports}})
	if len(c.Imports) != 0 || len(refused) != 1 {
		t.Fatalf("imports %+v refused %+v", c.Imports, refused)
	}
}
