package accounts

import (
	"fmt"

	"github.com/nats-io/jwt/v2"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// AccountRef is a NatsAccount by namespace and name.
type AccountRef struct{ Namespace, Name string }

func (r AccountRef) String() string { return r.Namespace + "/" + r.Name }

// Resolve is ref as seen from namespace ns: an unset namespace is ns.
func Resolve(ns string, ref v1alpha1.AccountRef) AccountRef {
	if ref.Namespace == "" {
		return AccountRef{Namespace: ns, Name: ref.Name}
	}
	return AccountRef{Namespace: ref.Namespace, Name: ref.Name}
}

// Account is what an account's JWT is made from.
type Account struct {
	Ref  AccountRef
	Spec v1alpha1.NatsAccountSpec
	// PublicKey is the account's identity (A...), SigningKey the public key
	// that signs its users; PreviousSigningKey, while a rotation keeps it,
	// the one that signed them before.
	PublicKey, SigningKey, PreviousSigningKey string
	// Revoked are the users revoked, by public key, with the Unix time
	// before which (inclusive) their JWTs are refused.
	Revoked map[string]int64
}

// Peer is another account on the same cluster, as an importer sees it.
type Peer struct {
	PublicKey string
	Exports   []v1alpha1.AccountExport
}

// Activation is a token the exporter must sign for an import of a private
// export: the servers accept the import only with it.
type Activation struct {
	// Exporter signs it; Import is the index in the claims' imports.
	Exporter AccountRef
	Import   int
	Claims   *jwt.ActivationClaims
}

// RefusedImport is an import left out: the exporter does not export the
// subject to this account (or does not exist on the cluster).
type RefusedImport struct {
	Index  int
	Reason string
}

// AccountClaims is the JWT the servers get for a: its limits, exports and
// imports, signing key and revocations. An import is written only when
// its exporter exports that subject to a; each other one is refused, by
// index, with the reason. peers are the other accounts of the cluster.
func AccountClaims(a Account, peers map[AccountRef]Peer) (*jwt.AccountClaims, []Activation, []RefusedImport) {
	c := jwt.NewAccountClaims(a.PublicKey)
	c.Name = a.Ref.String()
	c.SigningKeys.Add(a.SigningKey)
	if a.PreviousSigningKey != "" {
		c.SigningKeys.Add(a.PreviousSigningKey)
	}
	limits(&c.Limits, a.Spec.Limits)
	for _, e := range a.Spec.Exports {
		c.Exports.Add(export(e))
	}
	var acts []Activation
	var refused []RefusedImport
	for i, im := range a.Spec.Imports {
		from := Resolve(a.Ref.Namespace, im.Account)
		peer, ok := peers[from]
		if !ok || from == a.Ref {
			refused = append(refused, RefusedImport{i, fmt.Sprintf("imports[%d]: account %s is not on this cluster", i, from)})
			continue
		}
		e, ok := exportFor(peer.Exports, from.Namespace, a.Ref, im)
		if !ok {
			refused = append(refused, RefusedImport{i, fmt.Sprintf("imports[%d]: account %s does not export %s %s to this account", i, from, im.Type, im.Subject)})
			continue
		}
		imp := &jwt.Import{Account: peer.PublicKey, Subject: jwt.Subject(im.Subject), Type: exportType(im.Type)}
		if im.LocalSubject != "" {
			imp.LocalSubject = jwt.RenamingSubject(im.LocalSubject)
		}
		if !e.Public {
			act := jwt.NewActivationClaims(a.PublicKey)
			act.ImportSubject = jwt.Subject(im.Subject)
			act.ImportType = exportType(im.Type)
			acts = append(acts, Activation{Exporter: from, Import: len(c.Imports), Claims: act})
		}
		c.Imports.Add(imp)
	}
	for user, at := range a.Revoked {
		c.RevokeAt(user, unix(at))
	}
	return c, acts, refused
}

// exportFor is the export of an exporter in namespace ns that lets
// importer take im: the same subject and type, public or naming it.
func exportFor(exports []v1alpha1.AccountExport, ns string, importer AccountRef, im v1alpha1.AccountImport) (v1alpha1.AccountExport, bool) {
	for _, e := range exports {
		if e.Subject != im.Subject || e.Type != im.Type {
			continue
		}
		if e.Public {
			return e, true
		}
		for _, to := range e.To {
			if Resolve(ns, to) == importer {
				return e, true
			}
		}
	}
	return v1alpha1.AccountExport{}, false
}

func export(e v1alpha1.AccountExport) *jwt.Export {
	out := &jwt.Export{Subject: jwt.Subject(e.Subject), Type: exportType(e.Type), TokenReq: !e.Public}
	if e.Type == v1alpha1.ExportService && e.ResponseType != "" {
		out.ResponseType = jwt.ResponseType(e.ResponseType)
	}
	return out
}

func exportType(t v1alpha1.ExportType) jwt.ExportType {
	if t == v1alpha1.ExportService {
		return jwt.Service
	}
	return jwt.Stream
}

// limits writes the spec's limits over NewAccountClaims' unlimited ones.
// JetStream stays off (zero storage) unless limits.jetstream is set; then
// an unset field is unlimited.
func limits(l *jwt.OperatorLimits, in v1alpha1.AccountLimits) {
	set := func(dst *int64, v *int64) {
		if v != nil {
			*dst = *v
		}
	}
	set(&l.Conn, in.Connections)
	set(&l.Subs, in.Subscriptions)
	set(&l.Payload, in.Payload)
	js := in.JetStream
	if js == nil {
		return
	}
	l.MemoryStorage, l.DiskStorage, l.Streams, l.Consumer = jwt.NoLimit, jwt.NoLimit, jwt.NoLimit, jwt.NoLimit
	if js.MemoryStorage != nil {
		l.MemoryStorage = js.MemoryStorage.Value()
	}
	if js.DiskStorage != nil {
		l.DiskStorage = js.DiskStorage.Value()
	}
	set(&l.Streams, js.Streams)
	set(&l.Consumer, js.Consumers)
}

// DisabledAccountClaims is the JWT a deleted account leaves on the
// servers: every user it issued before at revoked, no connection
// admitted. The full resolver keeps an account JWT it was given (deletion
// is off, natsconf/trust.go), so this one, not nothing, is what a server
// down at the deletion finds when it syncs. Its JetStream data stays on
// the servers, unreachable: kubenats deletes no data the user did not
// name.
func DisabledAccountClaims(a Account, at int64) *jwt.AccountClaims {
	c, _, _ := AccountClaims(Account{Ref: a.Ref, PublicKey: a.PublicKey, SigningKey: a.SigningKey, Revoked: a.Revoked}, nil)
	c.Limits.Conn = 0
	c.Limits.LeafNodeConn = 0
	c.RevokeAt(jwt.All, unix(at))
	return c
}
