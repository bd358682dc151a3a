package render

// The file store limit (JetStream's max_file_store) is the claim's size
// less a headroom, because the claim's bytes are not all JetStream's to
// count. nats-server counts only stream data against max_file_store; on
// the same filesystem it also keeps what it does not count (the meta
// group's and every clustered stream's and consumer's Raft log, at least
// 8 MiB each before it is compacted, snapshots, the block being compacted,
// consumer state), and the filesystem keeps its own (ext4 as the kubelet
// formats it, without reserved blocks: inode tables and journal, 2.7% of
// 10Gi, 6.5% of 1Gi, 12% of 256Mi). A store limit equal to the claim
// fills the disk before the limit: nats-server then meets "no space left
// on device", disables JetStream on that server and fails its liveness
// probe, a restart loop on a disk that is still full. With the headroom,
// the limit comes first: publishes are refused with "insufficient
// resources" and the server goes on serving reads.
const (
	// fileStoreHeadroomPercent of the claim is kept free, for what grows
	// with the claim (the filesystem's tables, larger Raft logs).
	fileStoreHeadroomPercent = 5
	// fileStoreHeadroomFixed is kept free besides, for what does not grow
	// with it (the journal, the Raft logs of a few dozen streams).
	fileStoreHeadroomFixed = 256 << 20
)

// FileStoreLimit is max_file_store for a claim of claimBytes: 5% of the
// claim plus 256 MiB is left free, but never more than half the claim, so
// that a small claim (tests, development) still holds a store.
func FileStoreLimit(claimBytes int64) int64 {
	if claimBytes <= 0 {
		return 0
	}
	// claimBytes is at most 1Pi (checkQuantities): no overflow.
	headroom := claimBytes/100*fileStoreHeadroomPercent + fileStoreHeadroomFixed
	if half := claimBytes / 2; headroom > half {
		headroom = half
	}
	return claimBytes - headroom
}
