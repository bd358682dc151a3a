package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// JetStreamSpec configures persistence.
type JetStreamSpec struct {
	// Enabled turns JetStream on (the default).
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// FileStore is the persistent store, one claim per server.
	// +kubebuilder:default={}
	// +optional
	FileStore FileStoreSpec `json:"fileStore,omitempty"`

	// MemoryStore limits JetStream's memory store. Unset: nats-server's default.
	// +optional
	MemoryStore *MemoryStoreSpec `json:"memoryStore,omitempty"`

	// Domain is the JetStream domain, for leafnode topologies.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]{1,64}$`
	// +optional
	Domain string `json:"domain,omitempty"`

	// AllowedNamespaces may reference this cluster from JetStream resources in
	// other namespaces. "*" allows every namespace.
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^(\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?)$`
	// +listType=set
	// +optional
	AllowedNamespaces []string `json:"allowedNamespaces,omitempty"`

	// BalanceLeaders spreads the stream and consumer leaders over the
	// servers once the cluster is settled (after a rollout, a scale-up, a
	// restart): no server leads more than one group above another. Each
	// move asks a leader to step down to a current follower, one group of
	// a stream at a time. The groups of the cluster's application account;
	// accounts of mode jwt are left to NATS' own elections.
	// +kubebuilder:default=true
	// +optional
	BalanceLeaders *bool `json:"balanceLeaders,omitempty"`

	// ZoneSpread places the replicas of each stream in different zones
	// (the nodes' topology.kubernetes.io/zone label, which every server
	// carries as its JetStream server tag zone:<zone>). Auto, the default,
	// turns it on when the nodes the servers may run on span three zones
	// or more: fewer would leave an R3 stream nowhere to go. Off leaves
	// placement to the servers. A change of it restarts the servers.
	// +kubebuilder:default=Auto
	// +optional
	ZoneSpread ZoneSpread `json:"zoneSpread,omitempty"`
}

// ZoneSpread says whether replicas are kept in different zones.
// +kubebuilder:validation:Enum=Auto;Off
type ZoneSpread string

const (
	ZoneSpreadAuto ZoneSpread = "Auto"
	ZoneSpreadOff  ZoneSpread = "Off"
)

// AnnotationBalanceLeaders on a NatsCluster asks for a balance of its
// leaders now: any new value (a time, a counter) is a new request,
// carried out once the cluster is settled (kubectl kubenats balance).
const AnnotationBalanceLeaders = "kubenats.io/balance-leaders"

// BalancesLeaders reports whether the operator spreads the leaders.
func (s JetStreamSpec) BalancesLeaders() bool {
	return s.BalanceLeaders == nil || *s.BalanceLeaders
}

// PVCRetentionPolicy says what happens to the claims when servers go away.
// +kubebuilder:validation:Enum=Retain;Delete
type PVCRetentionPolicy string

const (
	// PVCRetain keeps the claims (the default): data outlives the cluster.
	PVCRetain PVCRetentionPolicy = "Retain"
	// PVCDelete removes the claims with the cluster and on scale-down.
	PVCDelete PVCRetentionPolicy = "Delete"
)

// FileStoreSpec is JetStream's file store.
//
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.size) || !has(self.size) || quantity(string(self.size)).compareTo(quantity(string(oldSelf.size))) >= 0",message="fileStore.size may grow but not shrink"
// +kubebuilder:validation:XValidation:rule="has(self.storageClassName) == has(oldSelf.storageClassName) && (!has(self.storageClassName) || self.storageClassName == oldSelf.storageClassName)",message="fileStore.storageClassName is immutable"
type FileStoreSpec struct {
	// Size of each server's claim. JetStream's max_file_store is less than
	// this: 5% of it plus 256Mi (at most half of it) is left for the
	// filesystem and nats-server's Raft logs (docs/natscluster.md, "Storage").
	// +kubebuilder:default="10Gi"
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="fileStore.size must be positive"
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).compareTo(quantity('1Pi')) <= 0",message="fileStore.size must be at most 1Pi"
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`

	// StorageClassName of the claims. Unset: the cluster's default class.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// PVCRetentionPolicy is Retain (default) or Delete, for deletion of the
	// cluster and for scale-down alike.
	// +kubebuilder:default=Retain
	// +optional
	PVCRetentionPolicy PVCRetentionPolicy `json:"pvcRetentionPolicy,omitempty"`
}

// MemoryStoreSpec limits JetStream's memory store.
type MemoryStoreSpec struct {
	// Size is JetStream's max_memory_store.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="memoryStore.size must be positive"
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).compareTo(quantity('16Ti')) <= 0",message="memoryStore.size must be at most 16Ti"
	Size resource.Quantity `json:"size"`
}
