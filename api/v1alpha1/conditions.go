package v1alpha1

// Condition types. Every condition has a positive meaning: True is good.
const (
	// ConditionReady is True when every part of the resource is ready.
	ConditionReady = "Ready"
	// ConditionAvailable is True when clients can use the servers through the
	// internal endpoint, even while other parts (an external address, a
	// rollout) are still on their way.
	ConditionAvailable = "Available"
	// ConditionCertificatesReady is True when every certificate the servers
	// need exists, can be read and has not expired.
	ConditionCertificatesReady = "CertificatesReady"
	// ConditionConfigLoaded is True once every server reported that it
	// loaded the current nats.conf and users.conf (by the marks the files
	// carry in its server metadata), not when the files were written.
	ConditionConfigLoaded = "ConfigLoaded"
	// ConditionStorageAvailable is True when every server that reported
	// its JetStream file store has room in it, and JetStream running.
	ConditionStorageAvailable = "StorageAvailable"
)

// ConditionReconciling and ConditionStalled are what GitOps tools read
// (kstatus, sigs.k8s.io/cli-utils/pkg/kstatus, behind Flux's health
// checks): Reconciling while the operator works toward the spec or waits
// for what comes by itself (InProgress), Stalled when it cannot go on
// without someone's change (Failed). They are the one exception to "True
// is good": kstatus defines them abnormal-true, so each is written only
// while True, with Ready's reason and message, and is absent otherwise
// (absent reads as False). Ready alone would do for InProgress in the
// kstatus of today, but only as a fallback it documents as a guess, and
// nothing but Stalled reads as Failed.
const (
	ConditionReconciling = "Reconciling"
	ConditionStalled     = "Stalled"
)

// Reasons of ConfigLoaded, and of a deleted generated Secret.
const (
	ReasonConfigLoaded = "ConfigLoaded"
	// ReasonReloadPending: a server still runs an older configuration;
	// the kubelet may not have refreshed its files yet. Ready says it too
	// while a server runs older files (not only an older certificate).
	ReasonReloadPending = "ReloadPending"
	// ReasonReloadStalled: pending for longer than a kubelet needs to
	// refresh mounted files; the operator keeps reloading.
	ReasonReloadStalled = "ReloadStalled"
	// ReasonReloadFailed: a server refused to reload (its log says why).
	ReasonReloadFailed = "ReloadFailed"
	// ReasonReloadNotChecked: the pass stopped before the check.
	ReasonReloadNotChecked = "NotChecked"
	// ReasonGeneratedSecretMissing: a Secret the operator generated for
	// running servers is gone; nothing is made anew without the user's
	// word (AnnotationRegenerateSecrets).
	ReasonGeneratedSecretMissing = "GeneratedSecretMissing"
)

// Reasons, shared by conditions and events.
const (
	ReasonReady               = "Ready"
	ReasonProgressing         = "Progressing"
	ReasonNameConflict        = "NameConflict"
	ReasonLoadBalancerPending = "LoadBalancerPending"
	ReasonSecretInvalid       = "SecretInvalid"
	ReasonSecretNotFound      = "SecretNotFound"
	ReasonApplyFailed         = "ApplyFailed"
	ReasonServersReady        = "ServersReady"
	ReasonServersNotReady     = "ServersNotReady"
	ReasonCertificatesReady   = "CertificatesReady"
	ReasonCertificateMissing  = "CertificateMissing"
	ReasonCertificateInvalid  = "CertificateInvalid"
	ReasonCertificateExpired  = "CertificateExpired"
	ReasonCertManagerMissing  = "CertManagerMissing"
	ReasonNoTLS               = "NoTLS"
	// ReasonRolloutHalted: a server of the new revision cannot become
	// ready (it cannot be scheduled, its image cannot be pulled); the
	// rollout replaces no other server until the change is fixed or
	// reverted.
	ReasonRolloutHalted = "RolloutHalted"
	// ReasonVersionChangeRefused: a change of the nats-server version was
	// checked before anything restarted and is not rolled; the message
	// says each reason.
	ReasonVersionChangeRefused = "VersionChangeRefused"
	// ReasonServerHung: a server whose pod looks ready does not answer the
	// operator (stopped, or cut off); no server is replaced or removed
	// until it answers again.
	ReasonServerHung = "ServerHung"
	// ReasonOOMKilled: a server is not ready because the kernel killed it
	// for going over its memory limit.
	ReasonOOMKilled = "OOMKilled"
	// Reasons of StorageAvailable.
	ReasonStorageAvailable = "StorageAvailable"
	ReasonStorageUnknown   = "StorageUnknown"
	// ReasonStoreFull: a server's file store reached max_file_store; it
	// refuses publishes to its streams, and serves the rest.
	ReasonStoreFull = "StoreFull"
	// ReasonJetStreamDisabled: a server turned JetStream off, which
	// nats-server does when a write finds its disk full.
	ReasonJetStreamDisabled = "JetStreamDisabled"
)

// ConditionMeshReady is True when a cluster with spec.mesh.istio runs
// under the mTLS mode it asks for, every server with a ready sidecar. It
// is absent for a cluster outside the mesh, and never holds Ready back
// while the servers serve.
const ConditionMeshReady = "MeshReady"

// Reasons of MeshReady.
const (
	// ReasonIstioNotInstalled: the API server does not serve Istio's
	// PeerAuthentication; nothing of the mesh is rendered.
	ReasonIstioNotInstalled = "IstioNotInstalled"
	// ReasonWaitingForSidecars: under PERMISSIVE, while the sidecars come
	// in (new pods, or a rollout one server at a time) or the cluster
	// settles before STRICT.
	ReasonWaitingForSidecars = "WaitingForSidecars"
	// ReasonMeshPermissive: every sidecar ready, PERMISSIVE as asked.
	ReasonMeshPermissive = "Permissive"
	// ReasonMeshStrict: every sidecar ready, STRICT as asked.
	ReasonMeshStrict = "Strict"
	// ReasonMeshRolledBack: STRICT met a fault of the mesh (a sidecar
	// missing or not ready, routes down between ready servers) and the
	// operator went back to PERMISSIVE, as spec.mesh.istio.rollback:
	// Automatic allows; it tries STRICT again once a sidecar fault is gone,
	// after the next spec change for a route fault.
	ReasonMeshRolledBack = "RolledBack"
	// ReasonMeshStrictUnhealthy: the same fault under STRICT, with
	// rollback Report (the default): the policy stays STRICT, and the
	// condition and a Warning event say what is wrong.
	ReasonMeshStrictUnhealthy = "StrictUnhealthy"
	// ReasonMeshDisabling: spec.mesh.istio was removed; PERMISSIVE while
	// the sidecars roll out, then the policy goes.
	ReasonMeshDisabling = "Disabling"
)

// ConditionMonitoringReady says, with spec.monitoring, whether the
// Prometheus Operator will scrape the servers: True once the PodMonitor is
// applied, False when its CRDs are missing.
const ConditionMonitoringReady = "MonitoringReady"

// Reasons of MonitoringReady.
const (
	ReasonMonitoringReady = "MonitoringReady"
	// ReasonPodMonitorCRDMissing: the Prometheus Operator's CRDs are not
	// installed, so there is no PodMonitor; the metrics are served anyway.
	ReasonPodMonitorCRDMissing = "PodMonitorCRDMissing"
)

// ConditionZoneRedundant says, for servers whose nodes span two zones or
// more, whether the cluster survives the loss of any one zone: True when
// every zone's loss leaves a quorum of the servers (and so of the
// JetStream meta group), False (ReasonQuorumInOneZone) when one zone holds
// so many servers that losing it stops JetStream. Absent when the nodes
// name fewer than two zones.
const ConditionZoneRedundant = "ZoneRedundant"

// Reasons of ZoneRedundant.
const (
	ReasonZonesSurviveLoss = "AnyZoneCanBeLost"
	ReasonQuorumInOneZone  = "QuorumInOneZone"
)
