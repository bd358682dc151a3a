package controller

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
// share a CA. An operator may list the ClusterIssuers tenants may name
// (IssuerPolicy).

// IssuerPolicy limits the ClusterIssuers a NatsCluster may name. The zero
// value allows any; a policy made from an empty list allows none.
type IssuerPolicy struct {
	restricted bool
	// allowed holds "group/name" for each allowed ClusterIssuer.
	allowed map[string]bool
}

// ParseIssuerPolicy reads the allowed ClusterIssuers, each written as its
// name (cert-manager.io's) or as group/name (an external issuer's). Given
// at all, even empty, the list is all that is allowed.
func ParseIssuerPolicy(entries []string) (IssuerPolicy, error) {
	p := IssuerPolicy{restricted: true, allowed: map[string]bool{}}
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
// ClusterIssuer when the policy lists it or lists nothing at all.
func (p IssuerPolicy) Allows(ref v1alpha1.IssuerRef) bool {
	if ref.Kind != "ClusterIssuer" || !p.restricted {
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

// issuerRefs are the issuers c's TLS names, with their fields.
func issuerRefs(c *v1alpha1.NatsCluster) []namedIssuerRef {
	var out []namedIssuerRef
	if r := c.Spec.TLS.Routes.IssuerRef; r != nil {
		out = append(out, namedIssuerRef{"spec.tls.routes.issuerRef", r})
	}
	if ct := c.Spec.ClientTLS(); ct.IssuerRef != nil {
		out = append(out, namedIssuerRef{"spec.tls.client.issuerRef", ct.IssuerRef})
	}
	return out
}
