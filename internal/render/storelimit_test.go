package render_test

import (
	"testing"

	"github.com/kubenats/kubenats/internal/render"
)

const mi, gi = int64(1) << 20, int64(1) << 30

// TestFileStoreLimit: 5% of the claim plus 256 MiB stays free, never more
// than half the claim.
func TestFileStoreLimit(t *testing.T) {
	for _, tc := range []struct {
		name         string
		claim, store int64
	}{
		{"the default 10Gi", 10 * gi, 10*gi - (10*gi/100*5 + 256*mi)},
		{"1Gi", gi, 751619278},
		{"100Gi", 100 * gi, 101737037824},
		{"1Pi, the largest claim", 1 << 50, 1<<50 - ((1<<50)/100*5 + 256*mi)},
		{"decimal 20G", 20_000_000_000, 20_000_000_000 - 1_000_000_000 - 256*mi},
		{"512Mi: half, the headroom would be more", 512 * mi, 256 * mi},
		{"256Mi: half", 256 * mi, 128 * mi},
		{"3 bytes", 3, 2},
		{"1 byte keeps a store", 1, 1},
		{"zero: no limit to write", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := render.FileStoreLimit(tc.claim); got != tc.store {
				t.Errorf("FileStoreLimit(%d) = %d, want %d", tc.claim, got, tc.store)
			}
		})
	}
}

// TestFileStoreLimitLeavesRoomBeyondTheFilesystem: what ext4 takes for
// itself (measured: mkfs.ext4 -F -m0, as the kubelet formats a volume, then
// df's available bytes, e2fsprogs 1.47) plus room for nats-server's
// uncounted files (Raft logs, at least 8 MiB per clustered stream before
// compaction: room for a dozen is asked here) fits in the headroom.
func TestFileStoreLimitLeavesRoomBeyondTheFilesystem(t *testing.T) {
	const raftRoom = 12 * 8 * mi
	for _, m := range []struct {
		claim, available int64
	}{
		{256 * mi, 236872704},
		{512 * mi, 500113408},
		{gi, 1003900928},
		{10 * gi, 10447220736},
		{100 * gi, 105072459776},
		{1 << 40, 1081084370944},
	} {
		store := render.FileStoreLimit(m.claim)
		if left := m.available - store; left < raftRoom {
			t.Errorf("claim %d: store %d leaves %d bytes on ext4 (%d available), want at least %d",
				m.claim, store, left, m.available, raftRoom)
		}
	}
}
