package jetstreamcontroller

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// ownerMark is what kubenats writes under jetstream.OwnerKey in a server
// object's metadata: the resource that made it, by kind, namespace, name
// and UID. The UID tells a resource from a later one of the same name (a
// namespace deleted and made again), which must not inherit the object.
type ownerMark struct {
	kind, namespace, name string
	uid                   types.UID
}

func (m ownerMark) String() string {
	return m.kind + "/" + m.namespace + "/" + m.name + "/" + string(m.uid)
}

// parseOwnerMark reads a mark. Marks written before the UID was part of
// them have three parts and no UID.
func parseOwnerMark(s string) (ownerMark, bool) {
	parts := strings.Split(s, "/")
	switch {
	case len(parts) == 3 && parts[0] != "" && parts[1] != "" && parts[2] != "":
		return ownerMark{kind: parts[0], namespace: parts[1], name: parts[2]}, true
	case len(parts) == 4 && parts[0] != "" && parts[1] != "" && parts[2] != "" && parts[3] != "":
		return ownerMark{kind: parts[0], namespace: parts[1], name: parts[2], uid: types.UID(parts[3])}, true
	}
	return ownerMark{}, false
}

// claim is how a server object relates to the resource looking at it.
type claim int

const (
	// claimMine: the resource made it (or, with a mark older than UIDs,
	// a resource of its kind, namespace and name did).
	claimMine claim = iota
	// claimUnmarked: no kubenats resource made it; adoptable on request.
	claimUnmarked
	// claimMarked: another kubenats resource made it; adoptable only once
	// the API server confirms that resource gone.
	claimMarked
)

// claimOf is how the server object with owner mark value relates to me. A
// mark that is present but unreadable counts as another's: whoever wrote it
// cannot be confirmed gone.
func claimOf(value string, me ownerMark) (claim, ownerMark) {
	if value == "" {
		return claimUnmarked, ownerMark{}
	}
	m, ok := parseOwnerMark(value)
	switch {
	case !ok:
		return claimMarked, ownerMark{}
	case m == me:
		return claimMine, m
	case m.uid == "" && m.kind == me.kind && m.namespace == me.namespace && m.name == me.name:
		return claimMine, m
	}
	return claimMarked, m
}

// jetStreamKinds make an empty object of each kind that marks server
// objects, to ask the API server about a mark's owner.
var jetStreamKinds = map[string]func() client.Object{
	"Stream":      func() client.Object { return &v1alpha1.Stream{} },
	"Consumer":    func() client.Object { return &v1alpha1.Consumer{} },
	"KeyValue":    func() client.Object { return &v1alpha1.KeyValue{} },
	"ObjectStore": func() client.Object { return &v1alpha1.ObjectStore{} },
}

// ownerGone asks the API server, past the cache (which may not have seen a
// resource created a moment ago), whether the resource a mark names is
// gone: deleted, or replaced by another of the same name. Anything it
// cannot confirm (an unreadable mark, a namespace it may not read) is not
// gone.
func ownerGone(ctx context.Context, api client.Reader, m ownerMark) (bool, error) {
	newObj, ok := jetStreamKinds[m.kind]
	if !ok {
		return false, nil
	}
	obj := newObj()
	err := api.Get(ctx, client.ObjectKey{Namespace: m.namespace, Name: m.name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case apierrors.IsForbidden(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return m.uid != "" && obj.GetUID() != m.uid, nil
}

// adoption decides whether obj may write the server object whose owner
// mark is mark: its own, or one it may adopt (event Adopted). refused says
// why not. Another resource's object is taken only when adoptExisting asks
// for it and the API server confirms that resource gone.
func (r *Reconciler[T, C]) adoption(ctx context.Context, obj T, mark string) (event string, refused *outcome) {
	lc := obj.GetLifecycle()
	what := fmt.Sprintf("%s %q", r.Kind.Name(), r.Kind.ServerName(obj))
	refuse := func(retry bool, format string, args ...any) (string, *outcome) {
		return "", &outcome{reason: reasonAlreadyExists, retry: retry, message: fmt.Sprintf(format, args...)}
	}
	c, owner := claimOf(mark, r.owner(obj))
	switch {
	case c == claimMine:
		return "", nil
	case lc.AdoptExisting && !guestMayAdopt(obj, c, owner):
		// Whose it is stays unsaid, as below.
		return refuse(false, "%s exists on the server and was not made from namespace %q: a resource on a NatsCluster of another namespace adopts only what its own namespace made; adopt it from the NatsCluster's namespace", what, obj.GetNamespace())
	case c == claimUnmarked && !lc.AdoptExisting:
		return refuse(false, "%s exists on the server and kubenats did not create it: set adoptExisting to take it over", what)
	case !lc.AdoptExisting:
		return refuse(false, "%s exists on the server, created by a kubenats resource that is not this one: set adoptExisting to take it over once that resource is gone", what)
	case lc.PreventUpdate:
		return refuse(false, "adopting needs a write, which preventUpdate forbids")
	case c == claimMarked:
		gone, err := ownerGone(ctx, r.APIReader, owner)
		if err != nil {
			return refuse(true, "%s belongs to another kubenats resource, which could not be looked up: %v", what, err)
		}
		if !gone {
			// Which resource it is stays unsaid: it may be another tenant's.
			return refuse(true, "%s belongs to another kubenats resource, which still exists: it cannot be adopted", what)
		}
	}
	return reasonAdopted, nil
}

// guestMayAdopt says whether obj may adopt a server object of claim c
// (last marked by owner). A guest, a resource on a NatsCluster of another
// namespace (let in by spec.jetstream.allowedNamespaces), adopts only
// what a gone resource of its own namespace made: what nobody marked
// (made with natscli, by the cluster's own team) or what the cluster's
// own namespace made belongs to the cluster's namespace, which a guest
// must not take over just by naming it. A resource of the cluster's
// namespace, or on a connection it configured itself, is no guest.
func guestMayAdopt(obj v1alpha1.JetStreamObject, c claim, owner ownerMark) bool {
	ref := obj.GetTarget().Cluster
	if ref == nil || ref.Namespace == "" || ref.Namespace == obj.GetNamespace() {
		return true
	}
	return c == claimMarked && owner.namespace == obj.GetNamespace()
}
