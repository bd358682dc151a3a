package backup_test

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/nats-io/jsm.go"

	"github.com/kubenats/kubenats/internal/backup"
	"github.com/kubenats/kubenats/test/s3server"
	"github.com/kubenats/kubenats/test/testnats"
)

// startStore runs SeaweedFS's S3 gateway (make test-bins) for one test.
func startStore(t *testing.T) (*s3server.Server, *minio.Client) {
	t.Helper()
	bin, err := filepath.Abs(s3server.Binary(filepath.Join("..", "..")))
	if err != nil {
		t.Fatal(err)
	}
	s := s3server.Start(t, bin, t.TempDir(), "127.0.0.1")
	c, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// objects are the keys under prefix in the store's bucket.
func objects(t *testing.T, s *s3server.Server, c *minio.Client, prefix string) []string {
	t.Helper()
	var keys []string
	for o := range c.ListObjects(ctx(t), s.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		keys = append(keys, o.Key)
	}
	return keys
}

// TestBackupInAnObjectStoreRestores: a backup taken into a real S3 store
// (SeaweedFS) restores into another server with every sequence and the
// consumer's ack floor; a second backup to the same key is refused and
// leaves the first alone; a changed archive is refused before the
// restore begins; a removal deletes the backup's objects and nothing
// beside them. Careless variant watched failing: a removal of every key
// under the prefix (the neighbour "backups/orders-10" went too).
func TestBackupInAnObjectStoreRestores(t *testing.T) {
	store, client := startStore(t)
	s := testnats.Start(t, 0)
	nc, js := connect(t, s)
	fillOrders(t, js)
	place := backup.Object{Client: client, Bucket: store.Bucket, Key: "backups/orders-1"}
	neighbour := backup.Object{Client: client, Bucket: store.Bucket, Key: "backups/orders-10"}
	m, err := backup.Take(ctx(t), nc, "ORDERS", place, backup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Messages != workloadN-1 || m.LastSeq != workloadN || m.Consumers != 1 || m.DataSize == 0 {
		t.Fatalf("manifest %+v", m)
	}
	if _, err := backup.Take(ctx(t), nc, "ORDERS", neighbour, backup.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := backup.Take(ctx(t), nc, "ORDERS", place, backup.Options{}); !errors.Is(err, backup.ErrExists) {
		t.Fatalf("a second backup to the same key: %v, want ErrExists", err)
	}

	to := testnats.Start(t, 0)
	nc2, js2 := connect(t, to)
	if _, err := backup.Restore(ctx(t), nc2, place, backup.RestoreOptions{Stream: "ORDERS"}); err != nil {
		t.Fatal(err)
	}
	checkRestoredOrders(t, js2)

	if err := backup.Remove(ctx(t), place); err != nil {
		t.Fatal(err)
	}
	if left := objects(t, store, client, "backups/orders-1/"); len(left) != 0 {
		t.Fatalf("after the removal the store holds %v", left)
	}
	if left := objects(t, store, client, "backups/orders-10/"); len(left) != 3 {
		t.Fatalf("the neighbouring backup holds %v after the removal of another", left)
	}
	if err := backup.Remove(ctx(t), place); err != nil {
		t.Fatalf("removing a removed backup: %v", err)
	}
}

// TestObjectStoreRestoreRefusesAChangedArchive: an archive replaced in
// the bucket is refused before anything is sent, and no stream is made.
// Careless variant watched failing: the manifest's checksum not checked
// for a backup in a store (the restore began, and the server failed it
// part-way with "s2: corrupt input").
func TestObjectStoreRestoreRefusesAChangedArchive(t *testing.T) {
	store, client := startStore(t)
	s := testnats.Start(t, 0)
	nc, js := connect(t, s)
	fillOrders(t, js)
	place := backup.Object{Client: client, Bucket: store.Bucket, Key: "orders"}
	m, err := backup.Take(ctx(t), nc, "ORDERS", place, backup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := client.GetObject(ctx(t), store.Bucket, "orders/"+m.DataFile, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(obj)
	obj.Close()
	if err != nil || int64(len(b)) != m.DataSize {
		t.Fatalf("read %d bytes of the archive: %v", len(b), err)
	}
	b[len(b)/2] ^= 0x01
	if _, err := client.PutObject(ctx(t), store.Bucket, "orders/"+m.DataFile, bytes.NewReader(b), int64(len(b)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	to := testnats.Start(t, 0)
	nc2, js2 := connect(t, to)
	if _, err := backup.Restore(ctx(t), nc2, place, backup.RestoreOptions{}); !errors.Is(err, backup.ErrChecksum) {
		t.Fatalf("restore of a changed archive: %v, want ErrChecksum", err)
	}
	if _, err := js2.Stream(ctx(t), "ORDERS"); err == nil {
		t.Fatal("a refused restore made the stream")
	}
}

// TestObjectStoreBackupCutShortIsNoBackup: an object store has no rename,
// so a backup cut short must not look like one. A backup refused by the
// store part-way removes what it wrote; a pod killed part-way (nothing
// cleaned up) leaves objects that no restore or removal takes for a
// backup. Careless variants watched failing: backup.json written before
// the manifest (the killed backup's archive and backup.json were read as
// a backup natscli took, and restored), and no abort (the refused
// backup's archive stayed in the bucket).
func TestObjectStoreBackupCutShortIsNoBackup(t *testing.T) {
	store, client := startStore(t)
	s := testnats.Start(t, 0)
	nc, js := connect(t, s)
	fillOrders(t, js)

	refused := backup.Object{Client: client, Bucket: store.Bucket, Key: "refused"}
	if _, err := backup.Take(ctx(t), nc, "ORDERS", backup.CutShort(refused, jsm.SnapshotMetaFile, false), backup.Options{}); err == nil {
		t.Fatal("a backup whose last write failed succeeded")
	}
	if left := objects(t, store, client, "refused/"); len(left) != 0 {
		t.Fatalf("a refused backup left %v", left)
	}

	for _, at := range []string{backup.ManifestFile, jsm.SnapshotMetaFile} {
		killed := backup.Object{Client: client, Bucket: store.Bucket, Key: "killed-at-" + at}
		if _, err := backup.Take(ctx(t), nc, "ORDERS", backup.CutShort(killed, at, true), backup.Options{}); err == nil {
			t.Fatalf("a backup killed at %s succeeded", at)
		}
		if _, _, err := backup.Read(ctx(t), killed); !errors.Is(err, backup.ErrNotABackup) {
			t.Fatalf("a backup killed at %s reads as %v, want ErrNotABackup", at, err)
		}
		to := testnats.Start(t, 0)
		nc2, _ := connect(t, to)
		if _, err := backup.Restore(ctx(t), nc2, killed, backup.RestoreOptions{}); !errors.Is(err, backup.ErrNotABackup) {
			t.Fatalf("restore of a backup killed at %s: %v, want ErrNotABackup", at, err)
		}
		if err := backup.Remove(ctx(t), killed); !errors.Is(err, backup.ErrNotABackup) {
			t.Fatalf("removal of a backup killed at %s: %v, want ErrNotABackup (left for a person)", at, err)
		}
	}
}
