// Command kubenats-backup takes a JetStream stream's backup and restores
// one, in the layout natscli's `nats stream backup` writes. It is the
// data path of backups, kept out of the operator's binary: it links the
// library natscli uses (github.com/nats-io/jsm.go), which links
// nats-server, and it runs in a pod of its own with only the credentials
// it needs, never inside the shared operator.
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `kubenats-backup backs up and restores JetStream streams.

Usage:
  kubenats-backup take [flags]      back up one stream into a new directory
  kubenats-backup restore [flags]   create a stream from a backup's directory
  kubenats-backup remove [flags]    delete a backup's directory (retention)

Run 'kubenats-backup COMMAND -h' for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "take":
		return runTake(args[1:], stdout, stderr)
	case "restore":
		return runRestore(args[1:], stdout, stderr)
	case "remove":
		return runRemove(args[1:], stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "kubenats-backup: unknown command %q\n\n%s", args[0], usage)
	return 2
}
