package jetstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"

	js "github.com/nats-io/nats.go/jetstream"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// OwnerKey is the server-side metadata key that marks what kubenats made:
// its value names the resource. An object without it is someone else's.
const OwnerKey = "io.kubenats.owner"

// Errors a kind's Observe returns.
var (
	// ErrNotFound: the server object does not exist.
	ErrNotFound = errors.New("not found on the server")
	// ErrStreamNotFound: the stream a consumer belongs to does not exist.
	ErrStreamNotFound = errors.New("the stream does not exist on the server")
)

// Observed is a server object as the reconciler needs it.
type Observed struct {
	// Hash is a hash of the server's whole configuration: drift changes it.
	Hash string
	// Owner is the value of OwnerKey in the object's metadata.
	Owner string
	// Cluster is the Raft group, for streams.
	Cluster *v1alpha1.RaftGroupStatus
	// Mirror is a mirror stream's distance from its origin.
	Mirror *v1alpha1.MirrorStatus
}

// Kind is what one JetStream kind adds to the shared reconciler: its pure
// translation and its server calls. Finalizers, the pool, ownership, drift,
// conditions and backoff belong to the reconciler.
type Kind[T v1alpha1.JetStreamObject, C any] interface {
	// Name is the kind's name, as in the API.
	Name() string
	// New returns an empty object of the kind, NewList an empty list.
	New() T
	NewList() client.ObjectList
	// Address is where the server object lives: its stream, and its name
	// there for a consumer. Advisories name both.
	Address(obj T) Address
	// ServerName names the server object in messages.
	ServerName(obj T) string
	// Desired is the configuration obj asks for, marked as owned by owner.
	Desired(obj T, owner string) (C, error)
	// Observe reads the server object.
	Observe(ctx context.Context, j js.JetStream, obj T) (Observed, error)
	// Create and Update write cfg and return what the server then holds.
	Create(ctx context.Context, j js.JetStream, obj T, cfg C) (Observed, error)
	Update(ctx context.Context, j js.JetStream, obj T, cfg C) (Observed, error)
	// Delete removes the server object.
	Delete(ctx context.Context, j js.JetStream, obj T) error
}

// hashConfig hashes a server configuration by its JSON form. Callers leave
// out the metadata the server stamps itself (_nats.ver changes with every
// server upgrade, which is not drift).
func hashConfig(cfg any) string {
	b, err := json.Marshal(cfg)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// withOwner returns metadata with the owner mark added, leaving the
// caller's map untouched.
func withOwner(metadata map[string]string, owner string) map[string]string {
	out := make(map[string]string, len(metadata)+1)
	for k, v := range metadata {
		out[k] = v
	}
	out[OwnerKey] = owner
	return out
}

// raftGroup is a stream's cluster view without the fields that change while
// idle (lag, last activity).
func raftGroup(ci *js.ClusterInfo) *v1alpha1.RaftGroupStatus {
	if ci == nil || (ci.Leader == "" && len(ci.Replicas) == 0) {
		return nil
	}
	g := &v1alpha1.RaftGroupStatus{Leader: ci.Leader}
	for _, p := range ci.Replicas {
		g.Replicas = append(g.Replicas, v1alpha1.ReplicaStatus{Name: p.Name, Current: p.Current, Offline: p.Offline})
	}
	return g
}

// withoutServerMetadata drops the _nats.* keys the server adds; nil when
// nothing else is left.
func withoutServerMetadata(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if !strings.HasPrefix(k, "_nats.") {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
