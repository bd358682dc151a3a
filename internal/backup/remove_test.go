package backup_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubenats/kubenats/internal/backup"
	"github.com/kubenats/kubenats/test/testnats"
)

// TestRemoveDeletesOnlyABackup: retention's removal deletes a backup's
// directory and nothing that is not one, not even through a link to a
// backup. Careless variant watched failing: os.RemoveAll on the path
// alone (the user's directory beside the backups was deleted).
func TestRemoveDeletesOnlyABackup(t *testing.T) {
	s := testnats.Start(t, 0)
	nc, js := connect(t, s)
	fillOrders(t, js)
	root := t.TempDir()
	dir := filepath.Join(root, "orders")
	if _, err := backup.Take(ctx(t), nc, "ORDERS", backup.Dir(dir), backup.Options{}); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(root, "notes")
	if err := os.MkdirAll(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notes, "keep.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{notes, link} {
		if err := backup.Remove(ctx(t), backup.Dir(p)); !errors.Is(err, backup.ErrNotABackup) {
			t.Errorf("Remove(%s) = %v, want ErrNotABackup", filepath.Base(p), err)
		}
	}
	if _, err := os.Stat(filepath.Join(notes, "keep.txt")); err != nil {
		t.Fatalf("a directory that is no backup lost its file: %v", err)
	}
	if err := backup.Remove(ctx(t), backup.Dir(dir)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the backup is still there: %v", err)
	}
	if err := backup.Remove(ctx(t), backup.Dir(dir)); err != nil {
		t.Fatalf("removing it again: %v, want nothing to do", err)
	}
}
