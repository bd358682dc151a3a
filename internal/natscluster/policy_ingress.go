package natscluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/status"
	"github.com/kubenats/kubenats/internal/usersecrets"
)

// ReasonIngressNotAllowed: spec.websocket.ingress names a host or an
// annotation the operator's --allowed-ingress-hosts or
// --allowed-ingress-annotations do not list.
const ReasonIngressNotAllowed = "IngressNotAllowed"

// The WebSocket Ingress publishes a cluster beyond the Kubernetes cluster,
// written with the operator's rights. Admission (the publishing policy)
// lets only someone who may create Ingresses ask for one; what it then
// says is held to what the platform allows: its host, which external DNS
// controllers publish and certificate issuers sign for, and its
// annotations, which ingress controllers and cert-manager's ingress-shim
// act on (configuration snippets, issuers, load balancer schemes). A
// tenant's own Ingress goes through the platform's admission under the
// tenant's name; this one is written under the operator's, so the
// operator checks it itself.

// IngressPolicy limits the hosts and annotations of WebSocket Ingresses.
// The zero value allows any host and no annotation.
type IngressPolicy struct {
	// hostsListed: only hosts are allowed; otherwise any host.
	hostsListed bool
	// hosts are exact host names or "*.<domain>", one label under domain.
	hosts []string
	// annotations are exact keys or prefixes written with a trailing "*".
	annotations []string
}

// ParseIngressPolicy reads the allow-lists. hosts nil allows any host;
// given, even empty, it is all that is allowed: exact names
// ("nats.example.com") or one label under a domain ("*.apps.example.com"
// allows "nats.apps.example.com", never "a.b.apps.example.com" nor
// "apps.example.com"). annotations are exact keys
// ("nginx.ingress.kubernetes.io/proxy-read-timeout") or prefixes ending in
// "*" ("nginx.ingress.kubernetes.io/proxy-*"); none allows no annotation.
func ParseIngressPolicy(hosts *[]string, annotations []string) (IngressPolicy, error) {
	var p IngressPolicy
	if hosts != nil {
		p.hostsListed = true
		for _, h := range *hosts {
			h = strings.ToLower(strings.TrimSpace(h))
			if h == "" {
				continue
			}
			if errs := validation.IsDNS1123Subdomain(strings.TrimPrefix(h, "*.")); len(errs) > 0 {
				return IngressPolicy{}, fmt.Errorf("allowed Ingress host %q: write a host name or *.<domain>: %s", h, errs[0])
			}
			p.hosts = append(p.hosts, h)
		}
	}
	for _, a := range annotations {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if strings.Contains(strings.TrimSuffix(a, "*"), "*") {
			return IngressPolicy{}, fmt.Errorf("allowed Ingress annotation %q: a \"*\" may only end a prefix", a)
		}
		p.annotations = append(p.annotations, a)
	}
	return p, nil
}

// AllowsHost reports whether an Ingress may route host.
func (p IngressPolicy) AllowsHost(host string) bool {
	if !p.hostsListed {
		return true
	}
	host = strings.ToLower(host)
	for _, h := range p.hosts {
		domain, wildcard := strings.CutPrefix(h, "*.")
		if !wildcard {
			if host == h {
				return true
			}
			continue
		}
		label, ok := strings.CutSuffix(host, "."+domain)
		if ok && label != "" && !strings.Contains(label, ".") {
			return true
		}
	}
	return false
}

// AllowsAnnotation reports whether an Ingress may carry the annotation key.
func (p IngressPolicy) AllowsAnnotation(key string) bool {
	for _, a := range p.annotations {
		if prefix, ok := strings.CutSuffix(a, "*"); ok {
			if strings.HasPrefix(key, prefix) {
				return true
			}
		} else if key == a {
			return true
		}
	}
	return false
}

// refusal is the blocker for c's WebSocket Ingress under p, or nil. It
// names the first refused annotation (in key order) or the host.
func (p IngressPolicy) refusal(c *v1alpha1.NatsCluster) *status.Blocker {
	if !c.Spec.WebSocketIngressEnabled() {
		return nil
	}
	ing := c.Spec.WebSocket.Ingress
	if !p.AllowsHost(ing.Host) {
		return &status.Blocker{Reason: ReasonIngressNotAllowed, Fatal: true, Message: fmt.Sprintf(
			"spec.websocket.ingress.host %q is not a host this operator publishes Ingresses for (--allowed-ingress-hosts: %s); ask the cluster admin",
			ing.Host, listed(p.hosts))}
	}
	keys := make([]string, 0, len(ing.Annotations))
	for k := range ing.Annotations {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !p.AllowsAnnotation(k) {
			return &status.Blocker{Reason: ReasonIngressNotAllowed, Fatal: true, Message: fmt.Sprintf(
				"spec.websocket.ingress.annotations: %q is not an annotation this operator puts on Ingresses (--allowed-ingress-annotations: %s); ask the cluster admin",
				k, listed(p.annotations))}
		}
	}
	return nil
}

func listed(entries []string) string {
	if len(entries) == 0 {
		return "none"
	}
	return strings.Join(entries, ", ")
}

// ingressSecretRefusal is the blocker for c's WebSocket Ingress's TLS
// Secret, nil when there is none or it may be used. The ingress controller
// serves whatever Secret the Ingress names, so it must be one its owner
// opted in, as every Secret the operator uses.
func ingressSecretRefusal(ctx context.Context, userSecrets client.Reader, c *v1alpha1.NatsCluster) (*status.Blocker, error) {
	if !c.Spec.WebSocketIngressEnabled() {
		return nil, nil
	}
	_, refusal, err := usersecrets.Get(ctx, userSecrets, c.Namespace, c.Spec.WebSocket.Ingress.TLSSecretName, "spec.websocket.ingress.tlsSecretName")
	if refusal != "" {
		return &status.Blocker{Reason: v1alpha1.ReasonSecretNotFound, Fatal: true, Message: refusal}, nil
	}
	return nil, err
}
