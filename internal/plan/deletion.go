package plan

import (
	"fmt"
	"sort"
	"strings"
)

// AnnotationDeleteWithData on a NatsCluster is the user's word that it may
// go although its streams hold messages or other namespaces' resources use
// it. Its value must be "true".
const AnnotationDeleteWithData = "kubenats.io/delete-with-data"

// StreamHolding is a stream that still holds messages.
type StreamHolding struct {
	Account, Stream string
	Messages        uint64
}

// DeletionObservation is what a deleted NatsCluster's guard saw.
type DeletionObservation struct {
	// Allowed: the user annotated AnnotationDeleteWithData "true".
	Allowed bool
	// NamespaceGoing: the cluster's namespace is being deleted, which
	// deletes everything in it whatever the guard says.
	NamespaceGoing bool
	// Users are resources of other namespaces that name the cluster
	// (namespace/kind/name).
	Users []string
	// ServersRunning: some server pod runs; without one there is nothing
	// to read, and the claims follow the retention policy.
	ServersRunning bool
	// Read: every running server's streams were read.
	Read bool
	// Streams are the streams holding messages, once read.
	Streams []StreamHolding
}

// DeletionVerdict is whether a deleted cluster may go, and if not why.
type DeletionVerdict struct {
	Release bool
	Reason  string
	Message string
}

// Reasons a deletion waits.
const (
	ReasonDeletionHeldByData  = "StreamsHoldMessages"
	ReasonDeletionHeldByUsers = "UsedByOtherNamespaces"
	ReasonDeletionUnread      = "StreamsNotRead"
)

// maxNamed bounds the names a message lists.
const maxNamed = 5

// Deletion decides whether a deleted NatsCluster may go. Data and users
// hold it until they are gone or the user allows it: a kubectl delete of
// the wrong object must not take the messages with it. Servers that run
// but cannot be read hold it too (what they hold is unknown); a cluster
// with no running server has nothing to read.
func Deletion(o DeletionObservation) DeletionVerdict {
	switch {
	case o.Allowed:
		return DeletionVerdict{Release: true}
	case o.NamespaceGoing:
		return DeletionVerdict{Release: true}
	case len(o.Users) > 0:
		users := append([]string(nil), o.Users...)
		sort.Strings(users)
		return DeletionVerdict{Reason: ReasonDeletionHeldByUsers, Message: fmt.Sprintf(
			"deletion waits: %d resources of other namespaces use this cluster (%s); delete them, or annotate %s=true",
			len(users), named(users), AnnotationDeleteWithData)}
	case !o.ServersRunning:
		return DeletionVerdict{Release: true}
	case !o.Read:
		return DeletionVerdict{Reason: ReasonDeletionUnread, Message: fmt.Sprintf(
			"deletion waits: the servers' streams cannot be read, so whether they hold messages is unknown; annotate %s=true to delete anyway",
			AnnotationDeleteWithData)}
	case len(o.Streams) > 0:
		var total uint64
		names := make([]string, 0, len(o.Streams))
		for _, s := range o.Streams {
			total += s.Messages
			names = append(names, fmt.Sprintf("%s/%s: %d", s.Account, s.Stream, s.Messages))
		}
		sort.Strings(names)
		return DeletionVerdict{Reason: ReasonDeletionHeldByData, Message: fmt.Sprintf(
			"deletion waits: %d streams hold %d messages (%s); delete or purge them, or annotate %s=true",
			len(o.Streams), total, named(names), AnnotationDeleteWithData)}
	}
	return DeletionVerdict{Release: true}
}

func named(names []string) string {
	if len(names) <= maxNamed {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxNamed], ", ") + fmt.Sprintf(" and %d more", len(names)-maxNamed)
}
