package natscluster

import (
	"fmt"
	"strings"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/status"
)

// ReasonIssuerNotAllowed: a TLS issuerRef names a ClusterIssuer the
// operator's --allowed-cluster-issuers does not list.
const ReasonIssuerNotAllowed = "IssuerNotAllowed"

// An Issuer lives in the cluster's own namespace: its owner chose it. A
// ClusterIssuer is the platform's, and it signs for every namespace that
// names it: a tenant naming the platform's CA gets certificates that the
// platform's other services trust, and two tenants on one ClusterIssuer
// share a CA. So no ClusterIssuer may be named unless the operator lists
// it (--allowed-cluster-issuers); and whatever an issuer is asked for is
// a leaf for the cluster's own names (render.Certificates), never a CA.

// IssuerPolicy limits the ClusterIssuers a NatsCluster may name. The zero
// value, like a policy made from no entries, allows none.
type IssuerPolicy struct {
	// allowed holds "group/name" for each allowed ClusterIssuer.
	allowed map[string]bool
}

// ParseIssuerPolicy reads the allowed ClusterIssuers, each written as its
// name (cert-manager.io's) or as group/name (an external issuer's). The
// list is all that is allowed: none when it is empty.
func ParseIssuerPolicy(entries []string) (IssuerPolicy, error) {
	p := IssuerPolicy{allowed: map[string]bool{}}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		group, name, ok := strings.Cut(e, "/")
		if !ok {
			group, name = "cert-manager.io", e
		}
		if group == "" || name == "" || strings.Contains(name, "/") {
			return IssuerPolicy{}, fmt.Errorf("allowed ClusterIssuer %q: write it as a name or as group/name", e)
		}
		p.allowed[group+"/"+name] = true
	}
	return p, nil
}

// Allows reports whether ref may be named: an Issuer always, a
// ClusterIssuer only when the policy lists it.
func (p IssuerPolicy) Allows(ref v1alpha1.IssuerRef) bool {
	if ref.Kind != "ClusterIssuer" {
		return true
	}
	group := ref.Group
	if group == "" {
		group = "cert-manager.io"
	}
	return p.allowed[group+"/"+ref.Name]
}

// refusal is the blocker for the first issuerRef of c that p does not
// allow, or nil. It comes before any Certificate is applied.
func (p IssuerPolicy) refusal(c *v1alpha1.NatsCluster) *status.Blocker {
	for _, named := range issuerRefs(c) {
		if !p.Allows(*named.ref) {
			return &status.Blocker{Reason: ReasonIssuerNotAllowed, Fatal: true, Message: fmt.Sprintf(
				"%s names ClusterIssuer %q, which this operator does not allow tenants to use (--allowed-cluster-issuers); name an Issuer of the namespace, or ask the cluster admin",
				named.field, named.ref.Name)}
		}
	}
	return nil
}

type namedIssuerRef struct {
	field string
	ref   *v1alpha1.IssuerRef
}

// issuerRefs are the issuers c's spec asks for certificates, with their
// fields: every IssuerRef of the API but spec.tls.routes.issuerRef, which
// nothing asks any more (the route CA is the operator's own; a cluster
// that still names one is told it is ignored). TestIssuerRefsCoverEveryField
// walks the API types for any IssuerRef this misses.
func issuerRefs(c *v1alpha1.NatsCluster) []namedIssuerRef {
	var out []namedIssuerRef
	if ct := c.Spec.ClientTLS(); ct.IssuerRef != nil {
		out = append(out, namedIssuerRef{"spec.tls.client.issuerRef", ct.IssuerRef})
	}
	if l := c.Spec.Leafnodes; l != nil && l.Accept != nil && l.Accept.TLS != nil && l.Accept.TLS.IssuerRef != nil {
		out = append(out, namedIssuerRef{"spec.leafnodes.accept.tls.issuerRef", l.Accept.TLS.IssuerRef})
	}
	if g := c.Spec.Gateway; g != nil && g.TLS.IssuerRef != nil {
		out = append(out, namedIssuerRef{"spec.gateway.tls.issuerRef", g.TLS.IssuerRef})
	}
	return out
}
