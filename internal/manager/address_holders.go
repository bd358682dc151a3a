package manager

import (
	"context"
	"net/netip"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// How long an answer of addressHolders is kept, and how many are: a
// connection that keeps redialling an address costs the API server two
// requests every holdersTTL at most, and a tenant naming many addresses
// costs the operator a bounded map.
const (
	holdersTTL  = 10 * time.Second
	holdersKept = 1024
)

// addressHolders tells which namespaces' pods and Services hold an address
// (jetstream.TargetPolicy.Holders), asking the API server: pods whose
// primary address it is (not on the host's network, not finished: a
// finished pod keeps an address that a new pod may have been given) and
// Services whose primary ClusterIP it is, by field selector and metadata
// only. It looks in every namespace, or in each watched one when the
// operator is confined (its Roles read no other).
type addressHolders struct {
	reader     client.Reader
	namespaces []string
	now        func() time.Time

	mu   sync.Mutex
	kept map[netip.Addr]heldBy
}

type heldBy struct {
	namespaces []string
	at         time.Time
}

// +kubebuilder:rbac:groups="",resources=pods;services,verbs=list

// Of lists the namespaces holding a.
func (h *addressHolders) Of(ctx context.Context, a netip.Addr) ([]string, error) {
	now := h.clock()
	h.mu.Lock()
	if got, ok := h.kept[a]; ok && now.Sub(got.at) < holdersTTL {
		h.mu.Unlock()
		return got.namespaces, nil
	}
	h.mu.Unlock()
	found, err := h.ask(ctx, a)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.kept == nil {
		h.kept = map[netip.Addr]heldBy{}
	}
	if len(h.kept) >= holdersKept {
		for k, v := range h.kept {
			if now.Sub(v.at) >= holdersTTL {
				delete(h.kept, k)
			}
		}
	}
	if len(h.kept) < holdersKept {
		h.kept[a] = heldBy{namespaces: found, at: now}
	}
	return found, nil
}

func (h *addressHolders) ask(ctx context.Context, a netip.Addr) ([]string, error) {
	ip := a.String()
	pods := fields.AndSelectors(
		fields.OneTermEqualSelector("status.podIP", ip),
		fields.OneTermEqualSelector("spec.hostNetwork", "false"),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
	)
	services := fields.OneTermEqualSelector("spec.clusterIP", ip)
	namespaces := h.namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	var out []string
	for _, ns := range namespaces {
		for _, q := range []struct {
			kind     string
			selector fields.Selector
		}{{"PodList", pods}, {"ServiceList", services}} {
			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(q.kind))
			if err := h.reader.List(ctx, list, client.InNamespace(ns), client.MatchingFieldsSelector{Selector: q.selector}); err != nil {
				return nil, err
			}
			for _, item := range list.Items {
				out = append(out, item.Namespace)
			}
		}
	}
	return out, nil
}

func (h *addressHolders) clock() time.Time {
	if h.now != nil {
		return h.now()
	}
	return time.Now()
}
