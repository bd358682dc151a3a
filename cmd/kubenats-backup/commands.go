package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/internal/backup"
	"github.com/kubenats/kubenats/internal/backupreport"
)

// natsFlags are how `take` and `restore` reach a NATS system: its URL,
// and credentials from files (a Secret mounted into the Job's pod), never
// from the command line, which any process of the node may read.
type natsFlags struct {
	url, creds, userFile, passwordFile, tokenFile, ca, cert, key *string
	handshakeFirst                                               *bool
}

func addNatsFlags(fs *flag.FlagSet) natsFlags {
	return natsFlags{
		url:          fs.String("server", "", "the NATS system's URL (tls:// for TLS)"),
		creds:        fs.String("creds", "", "a .creds file (JWT and seed) to connect with"),
		userFile:     fs.String("user-file", "", "a file holding the user name to connect with"),
		passwordFile: fs.String("password-file", "", "a file holding -user-file's password"),
		tokenFile:    fs.String("token-file", "", "a file holding the token to connect with"),
		ca:           fs.String("tls-ca", "", "CA the server's certificate chains to"),
		cert:         fs.String("tls-cert", "", "certificate to present, when the server verifies clients"),
		key:          fs.String("tls-key", "", "key of -tls-cert"),
		handshakeFirst: fs.Bool("tls-handshake-first", false,
			"start TLS before the server's INFO (servers with handshake_first)"),
	}
}

func (f natsFlags) connect(name string) (*nats.Conn, error) {
	if *f.url == "" {
		return nil, errors.New("-server is required")
	}
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(-1)}
	if *f.creds != "" {
		opts = append(opts, nats.UserCredentials(*f.creds))
	}
	if *f.userFile != "" {
		user, err := readSecretFile(*f.userFile, *f.userFile)
		if err != nil {
			return nil, err
		}
		password, err := readSecretFile(*f.passwordFile, "-user-file needs -password-file")
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.UserInfo(user, password))
	}
	if *f.tokenFile != "" {
		token, err := readSecretFile(*f.tokenFile, *f.tokenFile)
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.Token(token))
	}
	if *f.handshakeFirst {
		opts = append(opts, nats.TLSHandshakeFirst())
	}
	if *f.ca != "" {
		opts = append(opts, nats.RootCAs(*f.ca))
	}
	if *f.cert != "" || *f.key != "" {
		opts = append(opts, nats.ClientCert(*f.cert, *f.key))
	}
	return nats.Connect(*f.url, opts...)
}

// readSecretFile reads a small file mounted from a Secret, without its
// trailing newline; missing is the error when path is empty.
func readSecretFile(path, missing string) (string, error) {
	if path == "" {
		return "", errors.New(missing)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4<<10))
	if err != nil {
		return "", err
	}
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return string(b), nil
}

// runTake is `kubenats-backup take`: one stream's snapshot into a new
// directory, in natscli's layout, its manifest printed as JSON.
func runTake(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("take", flag.ContinueOnError)
	fs.SetOutput(stderr)
	conn := addNatsFlags(fs)
	store := addStoreFlags(fs)
	stream := fs.String("stream", "", "the stream to back up")
	all := fs.Bool("all", false, "back up every stream the user sees, each in a place named by it (instead of -stream)")
	to := fs.String("to", "", "where the backup goes: a directory to create, or s3://BUCKET/KEY")
	check := fs.Bool("check", false, "have the server check every message as it snapshots")
	maxMiB := addRateFlag(fs, "read the stream no faster than this many MiB of the archive per second (0: as fast as the server sends)")
	report := fs.String("report", "", "a file to write the outcome to as JSON (a Job's termination message)")
	progressAt := addProgressFlag(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if (*stream == "") == !*all || *to == "" {
		fmt.Fprintln(stderr, "kubenats-backup take: -to and one of -stream and -all are required")
		return 2
	}
	if !rateValid(*maxMiB) {
		fmt.Fprintln(stderr, "kubenats-backup take: -max-mib-per-second is from 0 to 1048576")
		return 2
	}
	place, err := store.location(*to)
	if err != nil {
		fmt.Fprintf(stderr, "kubenats-backup take: %v\n", err)
		writeReport(*report, backupreport.Failure(backupreport.ReasonFailed, err), stderr)
		return 2
	}
	nc, err := conn.connect("kubenats-backup take")
	if err != nil {
		fmt.Fprintf(stderr, "kubenats-backup take: %v\n", err)
		writeReport(*report, backupreport.Failure(backupreport.ReasonUnreachable, err), stderr)
		return 1
	}
	defer nc.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	progress, err := startProgress(ctx, *progressAt, "take", stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kubenats-backup take: %v\n", err)
		writeReport(*report, backupreport.Failure(backupreport.ReasonFailed, err), stderr)
		return 1
	}
	opts := backup.Options{CheckMessages: *check, Progress: progress, MaxBytesPerSecond: *maxMiB << 20}
	var taken backupreport.Report
	var out any
	if *all {
		set, err := backup.TakeAll(ctx, nc, place, opts)
		taken, out = backupreport.Report{Set: &set}, set
		if err != nil {
			taken = backupreport.Failure(backup.Reason(err), err)
		}
	} else {
		m, err := backup.Take(ctx, nc, *stream, place, opts)
		taken, out = backupreport.Report{Manifest: &m}, m
		if err != nil {
			taken = backupreport.Failure(backup.Reason(err), err)
		}
	}
	if taken.Reason != "" {
		fmt.Fprintf(stderr, "kubenats-backup take: %s\n", taken.Message)
		writeReport(*report, taken, stderr)
		return 1
	}
	if !writeReport(*report, taken, stderr) {
		return 1
	}
	return printJSON(stdout, stderr, out)
}

// runRestore is `kubenats-backup restore`: a stream created from a backup's
// directory (kubenats' or natscli's), never over one that exists.
func runRestore(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	conn := addNatsFlags(fs)
	store := addStoreFlags(fs)
	from := fs.String("from", "", "where the backup is: a directory, or s3://BUCKET/KEY")
	replicas := fs.Int("replicas", 0, "the restored stream's replicas (0: as backed up)")
	stream := fs.String("stream", "", "the stream the backup must hold (empty: any)")
	maxMiB := addRateFlag(fs, "send the archive no faster than this many MiB per second (0: as fast as the server takes it)")
	report := fs.String("report", "", "a file to write the outcome to as JSON (a Job's termination message)")
	progressAt := addProgressFlag(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *from == "" || *replicas < 0 || !rateValid(*maxMiB) {
		fmt.Fprintln(stderr, "kubenats-backup restore: -from is required, -replicas is not negative, -max-mib-per-second is from 0 to 1048576")
		return 2
	}
	place, err := store.location(*from)
	if err != nil {
		fmt.Fprintf(stderr, "kubenats-backup restore: %v\n", err)
		writeReport(*report, backupreport.Failure(backupreport.ReasonFailed, err), stderr)
		return 2
	}
	nc, err := conn.connect("kubenats-backup restore")
	if err != nil {
		fmt.Fprintf(stderr, "kubenats-backup restore: %v\n", err)
		writeReport(*report, backupreport.Failure(backupreport.ReasonUnreachable, err), stderr)
		return 1
	}
	defer nc.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	progress, err := startProgress(ctx, *progressAt, "restore", stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kubenats-backup restore: %v\n", err)
		writeReport(*report, backupreport.Failure(backupreport.ReasonFailed, err), stderr)
		return 1
	}
	state, err := backup.Restore(ctx, nc, place, backup.RestoreOptions{Replicas: *replicas, Stream: *stream, Progress: progress, MaxBytesPerSecond: *maxMiB << 20})
	if err != nil {
		fmt.Fprintf(stderr, "kubenats-backup restore: %v\n", err)
		writeReport(*report, backupreport.Failure(backup.Reason(err), err), stderr)
		return 1
	}
	restored := backupreport.Restored{Stream: *stream, Messages: state.Msgs, FirstSeq: state.FirstSeq, LastSeq: state.LastSeq}
	if restored.Stream == "" {
		req, _, err := backup.Read(ctx, place) // what was just restored from
		if err != nil {
			fmt.Fprintf(stderr, "kubenats-backup restore: %v\n", err)
			return 1
		}
		restored.Stream = req.Config.Name
	}
	if !writeReport(*report, backupreport.Report{Restored: &restored}, stderr) {
		return 1
	}
	return printJSON(stdout, stderr, state)
}

func printJSON(stdout, stderr io.Writer, v any) int {
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "kubenats-backup: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, string(out))
	return 0
}

// writeReport writes r to path, when one is named; it says whether that
// worked. A Job's report is how the operator learns the outcome, so a
// backup whose report cannot be written counts as failed.
func writeReport(path string, r backupreport.Report, stderr io.Writer) bool {
	if path == "" {
		return true
	}
	b, err := backupreport.Encode(r)
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "kubenats-backup: writing the report: %v\n", err)
		return false
	}
	return true
}
