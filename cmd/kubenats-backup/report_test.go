package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/internal/backupreport"
	"github.com/kubenats/kubenats/test/testnats"
)

// TestTakeReportsItsOutcome: what a Job's termination message says, as
// the operator decodes it, for a backup taken (its manifest) and for each
// failure a user must tell apart (a stream the server does not have, a
// target that exists, a server that is not there). The server wants a
// token, read from a file as a Job mounts it. Careless variant watched
// failing: the server's refusal matched as *api.ApiError, where jsm.go
// returns the value, so that it read as a generic BackupFailed.
func TestTakeReportsItsOutcome(t *testing.T) {
	s := testnats.Start(t, 0, func(o *server.Options) { o.Authorization = "tok-3n" })
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("tok-3n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	js := testnats.JetStreamWith(t, s, nats.Token("tok-3n"))
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}}); err != nil {
		t.Fatal(err)
	}
	for range 7 {
		if _, err := js.Publish(ctx, "events.x", []byte("e")); err != nil {
			t.Fatal(err)
		}
	}
	take := func(server, stream, to string) (int, backupreport.Report) {
		t.Helper()
		report := filepath.Join(dir, "report-"+filepath.Base(to))
		var out, errs bytes.Buffer
		code := run([]string{"take", "-server", server, "-token-file", token, "-stream", stream, "-to", to, "-report", report}, &out, &errs)
		b, err := os.ReadFile(report)
		if err != nil {
			t.Fatalf("take %s exited %d and wrote no report (%v): %s", stream, code, err, errs.String())
		}
		r, err := backupreport.Decode(string(b))
		if err != nil {
			t.Fatalf("take %s: its report %s does not decode: %v", stream, b, err)
		}
		return code, r
	}
	target := filepath.Join(dir, "backups", "events")
	code, r := take(s.ClientURL(), "EVENTS", target)
	if code != 0 || r.Manifest == nil || r.Manifest.Stream != "EVENTS" || r.Manifest.LastSeq != 7 || r.Manifest.Messages != 7 {
		t.Fatalf("a backup taken: exit %d, report %+v; want its manifest, 7 messages", code, r)
	}
	for _, tc := range []struct {
		name, server, stream, to, reason string
	}{
		{"no such stream", s.ClientURL(), "NOPE", filepath.Join(dir, "backups", "nope"), backupreport.ReasonServerRefused},
		{"target exists", s.ClientURL(), "EVENTS", target, backupreport.ReasonExists},
		{"no server", "nats://127.0.0.1:1", "EVENTS", filepath.Join(dir, "backups", "gone"), backupreport.ReasonUnreachable},
	} {
		code, r := take(tc.server, tc.stream, tc.to)
		if code != 1 || r.Manifest != nil || r.Reason != tc.reason || r.Message == "" {
			t.Errorf("%s: exit %d, report %+v; want exit 1 and reason %s with a message", tc.name, code, r, tc.reason)
		}
	}
}

// TestRestoreReportsItsOutcome: a restore's report says the stream it
// made, and a refusal says why: the stream is on the server already
// (never overwritten), or the backup holds another stream than the one
// asked for. Careless variant watched failing: -stream not passed on to
// the restore (the other stream was restored under its own name).
func TestRestoreReportsItsOutcome(t *testing.T) {
	from, to := testnats.Start(t, 0), testnats.Start(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	js := testnats.JetStream(t, from)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}}); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := js.Publish(ctx, "events.x", []byte("e")); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "events")
	var out, errs bytes.Buffer
	if code := run([]string{"take", "-server", from.ClientURL(), "-stream", "EVENTS", "-to", target}, &out, &errs); code != 0 {
		t.Fatalf("take: %d %s", code, errs.String())
	}
	restore := func(stream string) (int, backupreport.Report) {
		t.Helper()
		report := filepath.Join(dir, "report")
		code := run([]string{"restore", "-server", to.ClientURL(), "-from", target, "-stream", stream, "-report", report}, &out, &errs)
		b, err := os.ReadFile(report)
		if err != nil {
			t.Fatalf("restore exited %d and wrote no report (%v): %s", code, err, errs.String())
		}
		r, err := backupreport.Decode(string(b))
		if err != nil {
			t.Fatalf("restore's report %s: %v", b, err)
		}
		return code, r
	}
	if code, r := restore("ORDERS"); code != 1 || r.Reason != backupreport.ReasonOtherStream {
		t.Fatalf("a backup of EVENTS restored as ORDERS: exit %d, %+v", code, r)
	}
	if code, r := restore("EVENTS"); code != 0 || r.Restored == nil || r.Restored.Stream != "EVENTS" || r.Restored.LastSeq != 5 || r.Restored.Messages != 5 {
		t.Fatalf("restore: exit %d, %+v", code, r)
	}
	if code, r := restore("EVENTS"); code != 1 || r.Reason != backupreport.ReasonStreamExists {
		t.Fatalf("a second restore over the stream: exit %d, %+v", code, r)
	}
}
