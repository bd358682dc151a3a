package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/kubenats/kubenats/internal/backup"
	"github.com/kubenats/kubenats/internal/backupreport"
)

// runRemove is `kubenats-backup remove`: a backup's directory deleted,
// as a schedule's retention asks. Only a finished backup's directory is
// removed; anything else is refused and left alone. A directory that is
// gone already counts as removed (the Job may run again).
func runRemove(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("remove", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the backup's directory")
	report := fs.String("report", "", "a file to write the outcome to as JSON (a Job's termination message)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(stderr, "kubenats-backup remove: -dir is required")
		return 2
	}
	if err := backup.Remove(*dir); err != nil {
		fmt.Fprintf(stderr, "kubenats-backup remove: %v\n", err)
		reason := backupreport.ReasonFailed
		if errors.Is(err, backup.ErrNotABackup) {
			reason = backupreport.ReasonNotABackup
		}
		writeReport(*report, backupreport.Failure(reason, err), stderr)
		return 1
	}
	if !writeReport(*report, backupreport.Report{Removed: *dir}, stderr) {
		return 1
	}
	return 0
}
