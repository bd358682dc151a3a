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
	"syscall"
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
		{figure: "natscli_backup_synced_s", atMost: math.NaN()},
		{figure: "take/natscli_synced", atMost: math.NaN()},
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
// then restored by each into a second server, each tool twice in the
// order A B B A. The goals: each within 10 %
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
		// Each starts on a disk with nothing left to write back: the
		// stream's 1 GiB just published, or the archive the run before
		// left in the page cache (natscli does not sync it), would
		// otherwise be written back during the next run, which is
		// kubenats' take, first after the fill.
		syscall.Sync()
		start := time.Now()
		rss, err := peakrss.Run(cmd)
		if err != nil {
			tb.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, out.String())
		}
		return time.Since(start).Seconds(), float64(rss) / (1 << 20)
	}
	// Each tool runs twice, in the order A B B A, and its figure is the
	// mean of its two: the first of the four on a server runs slower
	// whatever the tool (a restore first took 11.6 to 15.1 s, second
	// 6.6 to 8.7 s, both tools tried first, 2026-12-07), and a fixed
	// order would give that to one of them.
	abba := func(ours, theirs func(round int) (float64, float64)) (oursS, theirsS, oursPeak float64) {
		a1, p1 := ours(1)
		b1, _ := theirs(1)
		b2, _ := theirs(2)
		a2, p2 := ours(2)
		return (a1 + a2) / 2, (b1 + b2) / 2, max(p1, p2)
	}
	archive := func(by string, round int) string { return filepath.Join(dir, fmt.Sprintf("by-%s-%d", by, round)) }
	flushed := 0.0 // the mean flush of natscli's archives, below
	take, natsBackup, takePeak := abba(
		func(r int) (float64, float64) {
			return timed(kubenatsBackup, "take", "-server", from.ClientURL(), "-stream", "BIG", "-to", archive("kubenats", r))
		},
		func(r int) (float64, float64) {
			s, peak := timed(natscli, "--server", from.ClientURL(), "stream", "backup", "BIG", archive("natscli", r), "--no-progress")
			flushed += flushTime(tb, archive("natscli", r)) / 2
			return s, peak
		})
	f.set("take_s", take)
	f.set("natscli_backup_s", natsBackup)
	f.set("take/natscli", take/natsBackup)
	// natscli leaves its archive in the page cache; kubenats' take
	// returns once the archive is on the disk. The same durability for
	// natscli is its time plus its archive's flush, timed alone.
	synced := natsBackup + flushed
	f.set("natscli_backup_synced_s", synced)
	f.set("take/natscli_synced", take/synced)
	f.set("take_MiB/s", float64(mib)/take)
	f.set("take_peak_rss_MiB", takePeak)

	// Each restore makes BIG on the second server, deleted after it.
	restoreOnce := func(name string, args ...string) (float64, float64) {
		s, peak := timed(name, args...)
		deleteStream(tb, testnats.JetStream(tb, to), "BIG")
		return s, peak
	}
	restore, natsRestore, restorePeak := abba(
		func(r int) (float64, float64) {
			return restoreOnce(kubenatsBackup, "restore", "-server", to.ClientURL(), "-from", archive("kubenats", r))
		},
		func(r int) (float64, float64) {
			return restoreOnce(natscli, "--server", to.ClientURL(), "stream", "restore", archive("natscli", r), "--no-progress")
		})
	f.set("restore_s", restore)
	f.set("natscli_restore_s", natsRestore)
	f.set("restore/natscli", restore/natsRestore)
	f.set("restore_peak_rss_MiB", restorePeak)
	return f
}

// flushTime is how long writing dir's files back to the disk takes, from
// a page cache that holds them dirty, right after they were written (each
// run began with a sync, so nothing else is being written back).
func flushTime(tb testing.TB, dir string) float64 {
	tb.Helper()
	files, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	for _, e := range files {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			tb.Fatal(err)
		}
	}
	return time.Since(start).Seconds()
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
