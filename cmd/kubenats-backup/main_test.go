package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/internal/backup"
	"github.com/kubenats/kubenats/test/testnats"
)

// TestTakeThenRestoreWithAPasswordFromAFile: the commands as a Job runs
// them, against servers that want a user and password: the password is
// read from a file (a Secret's mount), the manifest printed by take is
// what the backup holds, and restore makes the stream on another server.
// A password given on the command line is not a flag at all. Careless
// variant watched failing: -password-file read without trimming its
// newline (authorization violation).
func TestTakeThenRestoreWithAPasswordFromAFile(t *testing.T) {
	auth := func(o *server.Options) { o.Username, o.Password = "backup", "s3cret-pass" }
	from, to := testnats.Start(t, 0, auth), testnats.Start(t, 0, auth)
	dir := t.TempDir()
	user, password := filepath.Join(dir, "user"), filepath.Join(dir, "password")
	if err := os.WriteFile(user, []byte("backup\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(password, []byte("s3cret-pass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	js := testnats.JetStreamAs(t, from, "backup", "s3cret-pass")
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}}); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if _, err := js.Publish(ctx, "events.x", []byte("e")); err != nil {
			t.Fatal(err)
		}
	}
	conn := func(s *server.Server) []string {
		return []string{"-server", s.ClientURL(), "-user-file", user, "-password-file", password}
	}
	target := filepath.Join(dir, "events")
	var out, errs bytes.Buffer
	if code := run(append([]string{"take", "-stream", "EVENTS", "-to", target}, conn(from)...), &out, &errs); code != 0 {
		t.Fatalf("take exited %d: %s", code, errs.String())
	}
	var m backup.Manifest
	if err := json.Unmarshal(out.Bytes(), &m); err != nil || m.Stream != "EVENTS" || m.LastSeq != 10 || m.Messages != 10 {
		t.Fatalf("take printed %s (%v)", out.String(), err)
	}
	out.Reset()
	if code := run(append([]string{"restore", "-from", target}, conn(to)...), &out, &errs); code != 0 {
		t.Fatalf("restore exited %d: %s", code, errs.String())
	}
	restored, err := testnats.JetStreamAs(t, to, "backup", "s3cret-pass").Stream(ctx, "EVENTS")
	if err != nil || restored.CachedInfo().State.Msgs != 10 {
		t.Fatalf("the restored stream: %v", err)
	}
	errs.Reset()
	if code := run([]string{"take", "-password", "s3cret-pass"}, &out, &errs); code != 2 || !strings.Contains(errs.String(), "flag provided but not defined: -password") {
		t.Fatalf("a password on the command line: exit %d, %s", code, errs.String())
	}
}
