package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"

	"github.com/kubenats/kubenats/internal/backupreport"
)

// addProgressFlag is -progress-listen: where a run serves its progress
// for the operator to read into the status (a Job's pod has no API token
// to write it there itself).
func addProgressFlag(fs *flag.FlagSet) *string {
	return fs.String("progress-listen", "", "an address to serve the progress on (GET /progress), as a Job does; empty: none")
}

// startProgress serves progress on addr, when one is given, until ctx
// ends, and returns what a run tells its progress: it is served and
// logged to stderr.
func startProgress(ctx context.Context, addr, verb string, stderr io.Writer) (func(backupreport.Progress), error) {
	board := &backupreport.ProgressBoard{}
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("serving the progress: %w", err)
		}
		go backupreport.ServeProgress(ctx, ln, board)
	}
	return func(p backupreport.Progress) {
		board.Set(p)
		fmt.Fprintf(stderr, "kubenats-backup %s: %s: %d of about %d bytes\n", verb, p.Stream, p.Done, p.Total)
	}, nil
}
