//go:build !linux

package backup

import "os"

// writeBack is Linux's head start on the flush at the end; elsewhere the
// flush does it all.
func writeBack(*os.File, int64, int64) {}
