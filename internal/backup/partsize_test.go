package backup

import "testing"

// TestPartSizeFitsTheStreamInTheStoresParts: the upload's one buffer is
// 8 MiB for a stream that fits 10,000 such parts, and grows, in whole
// MiB, with a tenth to spare, for one that does not. Careless variant
// watched failing: a fixed 8 MiB (a 1 TiB stream's upload fails at part
// 10,001).
func TestPartSizeFitsTheStreamInTheStoresParts(t *testing.T) {
	for _, size := range []int64{0, 1 << 20, 70 << 30, 75 << 30, 80 << 30, 1 << 40, 5 << 40} {
		p := partSize(size)
		if p < MinPartSize || p%(1<<20) != 0 {
			t.Errorf("%d bytes: part %d, want whole MiB of at least %d", size, p, MinPartSize)
		}
		if int64(p)*maxParts < size+size/11 {
			t.Errorf("%d bytes: %d parts of %d hold %d, less than the stream and a tenth", size, maxParts, p, int64(p)*maxParts)
		}
		if size <= 70<<30 && p != MinPartSize {
			t.Errorf("%d bytes: part %d, want the least, %d", size, p, MinPartSize)
		}
	}
}
