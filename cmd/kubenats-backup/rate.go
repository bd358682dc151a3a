package main

import "flag"

// addRateFlag is -max-mib-per-second, the pace of a take or a restore.
func addRateFlag(fs *flag.FlagSet, usage string) *int64 {
	return fs.Int64("max-mib-per-second", 0, usage)
}

// rateValid: from 0 (no pace) to 1 TiB/s, so that it fits in bytes.
func rateValid(mib int64) bool { return mib >= 0 && mib <= 1<<20 }
