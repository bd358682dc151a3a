package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/kubenats/kubenats/internal/backup"
	"github.com/kubenats/kubenats/internal/backupreport"
)

// runRemove is `kubenats-backup remove`: a backup deleted, as a
// schedule's retention asks. Only a finished backup is removed; anything
// else is refused and left alone. A backup that is gone already counts as
// removed (the Job may run again).
func runRemove(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("remove", flag.ContinueOnError)
	fs.SetOutput(stderr)
	store := addStoreFlags(fs)
	dir := fs.String("dir", "", "the backup: its directory, or s3://BUCKET/KEY")
	report := fs.String("report", "", "a file to write the outcome to as JSON (a Job's termination message)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(stderr, "kubenats-backup remove: -dir is required")
		return 2
	}
	place, err := store.location(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "kubenats-backup remove: %v\n", err)
		writeReport(*report, backupreport.Failure(backupreport.ReasonFailed, err), stderr)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := backup.Remove(ctx, place); err != nil {
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
