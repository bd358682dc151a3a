package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/inprocess"
	"github.com/kubenats/kubenats/test/peakrss"
	"github.com/kubenats/kubenats/test/testnats"
)

func init() {
	goals["BackupThroughput"] = []goal{
		{figure: "stream_MiB", atMost: math.NaN()},
		{figure: "take_s", atMost: math.NaN(), floor: "natscli_backup_s"},
		{figure: "take/natscli", atMost: 1.1},
		{figure: "take_MiB/s", atMost: math.NaN()},
		{figure: "take_peak_rss_MiB", atMost: 64},
		{figure: "restore_s", atMost: math.NaN(), floor: "natscli_restore_s"},
		{figure: "restore/natscli", atMost: 1.1},
		{figure: "restore_peak_rss_MiB", atMost: 64},
	}
}

// BenchmarkBackupThroughput: a stream of KUBENATS_BENCH_BACKUP_MIB MiB
// (1024 by default) of messages that do not compress is backed up by
// kubenats-backup, as its Job runs it (GOMEMLIMIT, GOGC), and by natscli's
// `nats stream backup` from the same server in the same run (the floor),
// then restored by each into a second server. The goals: each within 10 %
// of natscli's time, and the Job's peak RSS under its 64Mi limit.
func BenchmarkBackupThroughput(b *testing.B) {
	mib := 1024
	if v, err := strconv.Atoi(os.Getenv("KUBENATS_BENCH_BACKUP_MIB")); err == nil && v > 0 {
		mib = v
	}
	for range b.N {
		backupThroughput(b, mib).report(b)
	}
}

func backupThroughput(tb testing.TB, mib int) *figures {
	f := newFigures("BackupThroughput")
	root := inprocess.RepoRoot()
	natscli := filepath.Join(root, "bin", "natscli", "nats")
	if _, err := os.Stat(natscli); err != nil {
		tb.Fatalf("no natscli (make test-bins): %v", err)
	}
	dir := tb.TempDir()
	kubenatsBackup := filepath.Join(dir, "kubenats-backup")
	if out, err := exec.Command("go", "build", "-trimpath", "-o", kubenatsBackup, filepath.Join(root, "cmd", "kubenats-backup")).CombinedOutput(); err != nil {
		tb.Fatalf("go build: %v\n%s", err, out)
	}
	from, to := testnats.Start(tb, 0), testnats.Start(tb, 0)
	fillStream(tb, testnats.JetStream(tb, from), mib)
	f.set("stream_MiB", float64(mib))

	timed := func(name string, args ...string) (seconds, peakMiB float64) {
		cmd := exec.Command(name, args...)
		cmd.Env = os.Environ()
		if name == kubenatsBackup {
			for _, e := range render.BackupRuntimeEnv {
				cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
			}
		} else {
			cmd.Env = append(cmd.Env, "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"))
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		rss, err := peakrss.Run(cmd)
		if err != nil {
			tb.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, out.String())
		}
		return time.Since(start).Seconds(), float64(rss) / (1 << 20)
	}
	byKubenats, byNatscli := filepath.Join(dir, "by-kubenats"), filepath.Join(dir, "by-natscli")
	take, takePeak := timed(kubenatsBackup, "take", "-server", from.ClientURL(), "-stream", "BIG", "-to", byKubenats)
	natsBackup, _ := timed(natscli, "--server", from.ClientURL(), "stream", "backup", "BIG", byNatscli, "--no-progress")
	f.set("take_s", take)
	f.set("natscli_backup_s", natsBackup)
	f.set("take/natscli", take/natsBackup)
	f.set("take_MiB/s", float64(mib)/take)
	f.set("take_peak_rss_MiB", takePeak)

	restore, restorePeak := timed(kubenatsBackup, "restore", "-server", to.ClientURL(), "-from", byKubenats)
	deleteStream(tb, testnats.JetStream(tb, to), "BIG")
	natsRestore, _ := timed(natscli, "--server", to.ClientURL(), "stream", "restore", byNatscli, "--no-progress")
	f.set("restore_s", restore)
	f.set("natscli_restore_s", natsRestore)
	f.set("restore/natscli", restore/natsRestore)
	f.set("restore_peak_rss_MiB", restorePeak)
	return f
}

// fillStream makes stream BIG of mib MiB in 256 KiB messages of random
// bytes, which no compression shrinks.
func fillStream(tb testing.TB, js jetstream.JetStream, mib int) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "BIG", Subjects: []string{"big"}}); err != nil {
		tb.Fatal(err)
	}
	const size = 256 << 10
	for i := 0; i < mib*4; i++ {
		payload := make([]byte, size)
		rand.Read(payload)
		if _, err := js.PublishAsync("big", payload); err != nil {
			tb.Fatal(err)
		}
		if i%64 == 63 {
			select {
			case <-js.PublishAsyncComplete():
			case <-ctx.Done():
				tb.Fatal("publishing: ", ctx.Err())
			}
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		tb.Fatal("publishing: ", ctx.Err())
	}
	s, err := js.Stream(ctx, "BIG")
	if err != nil || s.CachedInfo().State.Msgs != uint64(mib*4) {
		tb.Fatalf("stream BIG: %v, want %d messages", err, mib*4)
	}
}

func deleteStream(tb testing.TB, js jetstream.JetStream, name string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := js.DeleteStream(ctx, name); err != nil {
		tb.Fatal(fmt.Errorf("deleting %s: %w", name, err))
	}
}
