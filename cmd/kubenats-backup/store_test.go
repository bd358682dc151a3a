package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/internal/backupreport"
	"github.com/kubenats/kubenats/internal/render"
	"github.com/kubenats/kubenats/test/peakrss"
	"github.com/kubenats/kubenats/test/s3server"
	"github.com/kubenats/kubenats/test/testnats"
)

// binary is kubenats-backup built for the test: the binary the image
// carries, whose memory is what the Job's limit bounds.
func binary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kubenats-backup")
	if out, err := exec.Command("go", "build", "-trimpath", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// command runs kubenats-backup args in the Job's environment, and
// returns its report, its peak RSS and its output.
func command(t *testing.T, bin string, args ...string) (backupreport.Report, int64, string) {
	t.Helper()
	report := filepath.Join(t.TempDir(), "report")
	cmd := exec.Command(bin, append(args, "-report", report)...)
	cmd.Env = os.Environ()
	for _, e := range render.BackupRuntimeEnv {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	peak, _ := peakrss.Run(cmd)
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("kubenats-backup %s wrote no report: %v\n%s", args[0], err, out.String())
	}
	r, err := backupreport.Decode(string(b))
	if err != nil {
		t.Fatalf("kubenats-backup %s: %v\n%s", args[0], err, out.String())
	}
	return r, peak, out.String()
}

// storeFiles writes the store's keys and CA as a Secret's mount holds them.
func storeFiles(t *testing.T, s *s3server.Server, accessKey, secretKey string) []string {
	t.Helper()
	dir := t.TempDir()
	for name, v := range map[string]string{"accessKeyID": accessKey + "\n", "secretAccessKey": secretKey + "\n", "ca.crt": string(s.CAPEM)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"-s3-endpoint", s.Endpoint, "-s3-credentials", dir, "-s3-ca", filepath.Join(dir, "ca.crt")}
}

// TestObjectStoreBackupOfALargeStreamStaysWithinThePodsMemory: a stream
// of 96 MiB that does not compress is backed up to a real S3 store
// (SeaweedFS) and restored, each by kubenats-backup in a process of its
// own under the Job's GOMEMLIMIT, and neither's peak RSS reaches the
// Job's 64Mi limit. Careless variant watched failing: no PartSize, so
// that minio-go sizes the part of an upload of unknown length for a
// 5 TiB object (a 537 MB buffer, filled to the stream's size: peak RSS
// 122 MiB). Measured here: take 45 MiB, restore 22 MiB, the binary
// alone 15 MiB.
func TestObjectStoreBackupOfALargeStreamStaysWithinThePodsMemory(t *testing.T) {
	weed, err := filepath.Abs(s3server.Binary(filepath.Join("..", "..")))
	if err != nil {
		t.Fatal(err)
	}
	store := s3server.Start(t, weed, t.TempDir(), "127.0.0.1")
	from, to := testnats.Start(t, 0), testnats.Start(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	js := testnats.JetStream(t, from)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "BIG", Subjects: []string{"big"}}); err != nil {
		t.Fatal(err)
	}
	const size, msgs = 512 << 10, 192 // 96 MiB
	payload := make([]byte, size)
	for range msgs {
		rand.Read(payload)
		if _, err := js.Publish(ctx, "big", payload); err != nil {
			t.Fatal(err)
		}
	}
	where := []string{"-to", "s3://" + store.Bucket + "/big"}
	bin := binary(t)
	r, peak, out := command(t, bin, append(append([]string{"take", "-server", from.ClientURL(), "-stream", "BIG"}, where...), storeFiles(t, store, store.AccessKey, store.SecretKey)...)...)
	if r.Manifest == nil || r.Manifest.Messages != msgs || r.Manifest.DataSize < msgs*size {
		t.Fatalf("take reported %+v\n%s", r, out)
	}
	limit := render.BackupMemoryLimit.Value()
	t.Logf("take: %d MiB archive, peak RSS %s", r.Manifest.DataSize>>20, mib(peak))
	if peak >= limit {
		t.Errorf("take's peak RSS %s, the Job's limit %s", mib(peak), mib(limit))
	}
	where[0] = "-from"
	r, peak, out = command(t, bin, append(append([]string{"restore", "-server", to.ClientURL(), "-stream", "BIG"}, where...), storeFiles(t, store, store.AccessKey, store.SecretKey)...)...)
	if r.Restored == nil || r.Restored.Messages != msgs {
		t.Fatalf("restore reported %+v\n%s", r, out)
	}
	t.Logf("restore: peak RSS %s", mib(peak))
	if peak >= limit {
		t.Errorf("restore's peak RSS %s, the Job's limit %s", mib(peak), mib(limit))
	}
}

// TestObjectStoreFailuresSayWhy: a store that does not know the keys
// refuses (StoreRefused); one whose certificate chains to no trusted CA
// is not used at all (StoreUnreachable), and neither reason shows the
// secret key. Careless variants watched failing: every store error as
// BackupFailed (the ErrStore wrapping left out), and the transport's
// certificate check off (the untrusted store took the backup).
func TestObjectStoreFailuresSayWhy(t *testing.T) {
	weed, err := filepath.Abs(s3server.Binary(filepath.Join("..", "..")))
	if err != nil {
		t.Fatal(err)
	}
	store := s3server.Start(t, weed, t.TempDir(), "127.0.0.1")
	from := testnats.Start(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := testnats.JetStream(t, from).CreateStream(ctx, jetstream.StreamConfig{Name: "EVENTS", Subjects: []string{"events"}}); err != nil {
		t.Fatal(err)
	}
	take := []string{"take", "-server", from.ClientURL(), "-stream", "EVENTS", "-to", "s3://" + store.Bucket + "/events"}

	bin := binary(t)
	wrongSecret := "not-" + store.SecretKey
	r, _, out := command(t, bin, append(take, storeFiles(t, store, store.AccessKey, wrongSecret)...)...)
	if r.Reason != backupreport.ReasonStoreRefused || strings.Contains(r.Message, wrongSecret) || strings.Contains(out, wrongSecret) {
		t.Fatalf("wrong keys: reason %q, message %q\n%s", r.Reason, r.Message, out)
	}
	untrusted := storeFiles(t, store, store.AccessKey, store.SecretKey)
	untrusted = untrusted[:len(untrusted)-2] // the image's public roots alone
	r, _, out = command(t, bin, append(take, untrusted...)...)
	if r.Reason != backupreport.ReasonStoreUnreachable {
		t.Fatalf("an untrusted store: reason %q, message %q\n%s", r.Reason, r.Message, out)
	}
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
