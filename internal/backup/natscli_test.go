package backup_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/kubenats/kubenats/internal/backup"
	"github.com/kubenats/kubenats/test/testnats"
)

// natscli is the `nats` command hack/build-natscli.sh builds (make
// test-bins).
func natscli(t *testing.T, s *server.Server, args ...string) {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("..", "..", "bin", "natscli", "nats"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no natscli at %s: run make test-bins (%v)", bin, err)
	}
	cmd := exec.Command(bin, append([]string{"--server", s.ClientURL()}, args...)...)
	// No context of the machine's user: natscli reads its contexts from
	// the home directory.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nats %v: %v\n%s", args, err, out)
	}
}

// TestNatscliAndKubenatsReadEachOthersBackups: a backup natscli took
// (`nats stream backup`) restores with kubenats, and one kubenats took
// restores with `nats stream restore`; each time every message is back
// under its sequence and the consumer at its ack floor. Careless variant
// watched failing: backup.json holding the stream's configuration alone,
// not natscli's {config, state} (natscli found no stream name in it). The
// archive's name is no such variant: the server reads the format from its
// first bytes, and natscli restored a 2.15 archive named stream.tar.s2
// all the same.
func TestNatscliAndKubenatsReadEachOthersBackups(t *testing.T) {
	from := testnats.Start(t, 0)
	nc, js := connect(t, from)
	fillOrders(t, js)
	dir := t.TempDir()

	byNatscli := filepath.Join(dir, "by-natscli")
	natscli(t, from, "stream", "backup", "ORDERS", byNatscli, "--no-progress")
	intoKubenats := testnats.Start(t, 0)
	nc2, js2 := connect(t, intoKubenats)
	if _, err := backup.Restore(ctx(t), nc2, backup.Dir(byNatscli), backup.RestoreOptions{}); err != nil {
		t.Fatalf("kubenats restoring natscli's backup: %v", err)
	}
	checkRestoredOrders(t, js2)

	byKubenats := filepath.Join(dir, "by-kubenats")
	if _, err := backup.Take(ctx(t), nc, "ORDERS", backup.Dir(byKubenats), backup.Options{}); err != nil {
		t.Fatal(err)
	}
	intoNatscli := testnats.Start(t, 0)
	natscli(t, intoNatscli, "stream", "restore", byKubenats, "--no-progress")
	_, js3 := connect(t, intoNatscli)
	checkRestoredOrders(t, js3)
}
