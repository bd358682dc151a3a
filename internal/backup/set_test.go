package backup_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/internal/backup"
	"github.com/kubenats/kubenats/test/testnats"
)

// TestSetOfEveryStreamRestoresEach: a backup of every stream (two streams
// and a KV bucket's) into a directory and into a real object store holds
// one backup per stream beside its list; a stream restores from its own
// place with its sequences and ack floor, the set's own place restores
// nothing, and a removal takes the set whole. A set refused at its last
// write leaves nothing; one cut short by a kill is no set. Careless
// variant watched failing: the store's abort deleting only the set's own
// writes (the refused set's stream backups stayed in the bucket).
func TestSetOfEveryStreamRestoresEach(t *testing.T) {
	store, client := startStore(t)
	s := testnats.Start(t, 0)
	nc, js := connect(t, s)
	fillOrders(t, js)
	if _, err := js.CreateStream(ctx(t), jetstream.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}}); err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(ctx(t), jetstream.KeyValueConfig{Bucket: "config"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.PutString(ctx(t), "mode", "live"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	places := map[string]func(key string) backup.Location{
		"claim": func(key string) backup.Location { return backup.Dir(filepath.Join(dir, key)) },
		"store": func(key string) backup.Location { return backup.Object{Client: client, Bucket: store.Bucket, Key: key} },
	}
	empty := func(kind, key string) {
		t.Helper()
		if kind == "claim" {
			if _, err := os.Lstat(filepath.Join(dir, key)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s: %s is there (%v)", kind, key, err)
			}
			return
		}
		if left := objects(t, store, client, key+"/"); len(left) != 0 {
			t.Fatalf("%s: %s holds %v", kind, key, left)
		}
	}
	for kind, at := range places {
		set := at("sets/all")
		m, err := backup.TakeAll(ctx(t), nc, set, backup.Options{})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if m.Streams != 3 || m.Messages != workloadN-1+1 || m.Consumers != 1 {
			t.Fatalf("%s: the set says %+v, want 3 streams, %d messages, 1 consumer", kind, m, workloadN)
		}
		if _, backups, err := backup.ReadSet(ctx(t), set); err != nil || len(backups) != 3 || backups[0].Stream != "EVENTS" {
			t.Fatalf("%s: the set lists %+v (%v)", kind, backups, err)
		}
		to := testnats.Start(t, 0)
		nc2, js2 := connect(t, to)
		if _, err := backup.Restore(ctx(t), nc2, set, backup.RestoreOptions{}); !errors.Is(err, backup.ErrNotABackup) {
			t.Fatalf("%s: restore of the set's own place: %v, want ErrNotABackup", kind, err)
		}
		if _, err := backup.Restore(ctx(t), nc2, at("sets/all/ORDERS"), backup.RestoreOptions{Stream: "ORDERS"}); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		checkRestoredOrders(t, js2)
		if err := backup.Remove(ctx(t), set); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		empty(kind, "sets/all")

		refused := at("sets/refused")
		if _, err := backup.TakeAll(ctx(t), nc, backup.CutShort(refused, backup.SetFile, false), backup.Options{}); err == nil {
			t.Fatalf("%s: a set whose list could not be written succeeded", kind)
		}
		empty(kind, "sets/refused")
		killed := at("sets/killed")
		if _, err := backup.TakeAll(ctx(t), nc, backup.CutShort(killed, backup.SetFile, true), backup.Options{}); err == nil {
			t.Fatalf("%s: a set killed before its list succeeded", kind)
		}
		if _, _, err := backup.ReadSet(ctx(t), killed); !errors.Is(err, backup.ErrNotABackup) {
			t.Fatalf("%s: a set killed before its list reads as %v, want ErrNotABackup", kind, err)
		}
	}
}

// TestHostileSetListIsNoSet: a set's list is read from a claim or a
// store a tenant can write, so one that names a stream a path could
// climb out with, that miscounts, or that is larger than any list of
// MaxSetStreams is no set, and a removal of it deletes nothing. Careless
// variants watched failing: the names not checked (".." and a slash read
// as a set), and no bound on the list (the 9 MiB one was read whole).
func TestHostileSetListIsNoSet(t *testing.T) {
	for name, list := range map[string]string{
		"climbs out":  `{"streams":1,"backups":[{"stream":".."}]}`,
		"a slash":     `{"streams":1,"backups":[{"stream":"a/../../victim"}]}`,
		"miscounted":  `{"streams":5,"backups":[]}`,
		"over bounds": `{"streams":0,"backups":[],"pad":"` + strings.Repeat("x", 9<<20) + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			victim := filepath.Join(parent, "victim")
			if err := os.MkdirAll(filepath.Join(victim, "keep"), 0o700); err != nil {
				t.Fatal(err)
			}
			set := filepath.Join(parent, "sets", "evil")
			if err := os.MkdirAll(set, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(set, backup.SetFile), []byte(list), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, _, err := backup.ReadSet(ctx(t), backup.Dir(set)); !errors.Is(err, backup.ErrNotABackup) {
				t.Fatalf("ReadSet: %v, want ErrNotABackup", err)
			}
			if err := backup.Remove(ctx(t), backup.Dir(set)); !errors.Is(err, backup.ErrNotABackup) {
				t.Fatalf("Remove: %v, want ErrNotABackup", err)
			}
			if _, err := os.Stat(filepath.Join(victim, "keep")); err != nil {
				t.Fatalf("the victim's directory: %v", err)
			}
		})
	}
}
