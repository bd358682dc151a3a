package backup_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/jsm.go"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/internal/backup"
	"github.com/kubenats/kubenats/internal/backupreport"
	"github.com/kubenats/kubenats/test/testnats"
)

// Workload of the round trip: published messages N, of which the one at
// gapSeq is deleted (a restore that republished would renumber those
// after it), and acked messages M of the durable consumer.
const (
	workloadN = 100
	gapSeq    = 10
	workloadM = 40
	// ackFloor is the stream sequence of the M-th message: one past M, as
	// the deleted one is not delivered.
	ackFloor = workloadM + 1
)

func connect(t *testing.T, s *server.Server) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// fillOrders makes stream ORDERS with workloadN messages (gapSeq
// deleted) and consumer SHIP with its first workloadM acknowledged.
func fillOrders(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	c := ctx(t)
	stream, err := js.CreateStream(c, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= workloadN; i++ {
		if _, err := js.Publish(c, "orders.new", fmt.Appendf(nil, "order %d", i), jetstream.WithMsgID(fmt.Sprint("id-", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.DeleteMsg(c, gapSeq); err != nil {
		t.Fatal(err)
	}
	cons, err := stream.CreateOrUpdateConsumer(c, jetstream.ConsumerConfig{Durable: "SHIP", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(workloadM, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	acked := 0
	for msg := range batch.Messages() {
		if err := msg.DoubleAck(c); err != nil {
			t.Fatal(err)
		}
		acked++
	}
	if acked != workloadM {
		t.Fatalf("acked %d, want %d", acked, workloadM)
	}
}

// TestBackupRestoresSequencesAndAckFloors: a stream with a gap in its
// sequences and a durable consumer part-way through is backed up from one
// server and restored into another: every message is back under its own
// sequence number (the gap too), the consumer's ack floor is where it
// was and its next message is the first unacknowledged one, and the
// manifest says what the backup holds. Careless variants watched failing:
// a snapshot without the consumers' state (jsm.SnapshotConsumers left
// out: the consumer is missing), and a restore that creates the stream
// and publishes the messages again (sequences renumbered after the gap).
// Each tells its progress last with the whole archive done (careless
// variant watched failing: the restore's count taken before the server's
// last read, 0 of the archive).
func TestBackupRestoresSequencesAndAckFloors(t *testing.T) {
	from := testnats.Start(t, 0)
	nc, js := connect(t, from)
	fillOrders(t, js)
	dir := filepath.Join(t.TempDir(), "orders")
	var took backupreport.Progress
	m, err := backup.Take(ctx(t), nc, "ORDERS", backup.Dir(dir), backup.Options{Progress: func(p backupreport.Progress) { took = p }})
	if err != nil {
		t.Fatal(err)
	}
	if took != (backupreport.Progress{Stream: "ORDERS", Done: m.DataSize, Total: int64(m.Bytes)}) {
		t.Fatalf("the backup's last progress %+v; want the archive's %d bytes of the stream's %d", took, m.DataSize, m.Bytes)
	}
	if m.Stream != "ORDERS" || m.FirstSeq != 1 || m.LastSeq != workloadN || m.Messages != workloadN-1 || m.Consumers != 1 ||
		m.DataFile != jsm.SnapshotDataFile || len(m.SHA256) != 64 || m.DataSize == 0 || m.Finished.Before(m.Started) {
		t.Fatalf("manifest %+v", m)
	}
	for _, f := range []string{jsm.SnapshotMetaFile, jsm.SnapshotDataFile, backup.ManifestFile} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s in the backup: %v", f, err)
		}
	}

	to := testnats.Start(t, 0)
	nc2, js2 := connect(t, to)
	var restored backupreport.Progress
	state, err := backup.Restore(ctx(t), nc2, backup.Dir(dir), backup.RestoreOptions{Progress: func(p backupreport.Progress) { restored = p }})
	if err != nil {
		t.Fatal(err)
	}
	if state.LastSeq != workloadN || state.Msgs != workloadN-1 {
		t.Fatalf("restored state %+v", state)
	}
	if restored != (backupreport.Progress{Stream: "ORDERS", Done: m.DataSize, Total: m.DataSize}) {
		t.Fatalf("the restore's last progress %+v; want all %d bytes of the archive sent", restored, m.DataSize)
	}
	checkRestoredOrders(t, js2)
}

// checkRestoredOrders: every message under its own sequence, the gap
// kept, and SHIP resuming at its ack floor.
func checkRestoredOrders(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	c := ctx(t)
	stream, err := js.Stream(c, "ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= workloadN; seq++ {
		msg, err := stream.GetMsg(c, seq)
		if seq == gapSeq {
			if !errors.Is(err, jetstream.ErrMsgNotFound) {
				t.Fatalf("the deleted message %d: %v", seq, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("message %d: %v", seq, err)
		}
		if want := fmt.Sprintf("order %d", seq); string(msg.Data) != want || msg.Header.Get(jetstream.MsgIDHeader) != fmt.Sprint("id-", seq) {
			t.Fatalf("message %d is %q (id %q), want %q", seq, msg.Data, msg.Header.Get(jetstream.MsgIDHeader), want)
		}
	}
	cons, err := stream.Consumer(c, "SHIP")
	if err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(c)
	if err != nil {
		t.Fatal(err)
	}
	if info.AckFloor.Stream != ackFloor {
		t.Fatalf("SHIP's ack floor is %d, want %d", info.AckFloor.Stream, ackFloor)
	}
	next, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if meta, err := next.Metadata(); err != nil || meta.Sequence.Stream != ackFloor+1 {
		t.Fatalf("SHIP's next message: %+v, %v; want stream sequence %d", meta, err, ackFloor+1)
	}
}

// TestRestoreNeverOverwritesAStream: a restore into a server that has a
// stream of that name is refused with ErrStreamExists and leaves it as it
// was. Careless variants watched failing: the server's refusal passed on
// as it came (a plain API error, which a Backup's condition could not
// tell from a lost server), and a restore that deletes the stream in its
// way first (the later message lost).
func TestRestoreNeverOverwritesAStream(t *testing.T) {
	s := testnats.Start(t, 0)
	nc, js := connect(t, s)
	fillOrders(t, js)
	dir := filepath.Join(t.TempDir(), "orders")
	if _, err := backup.Take(ctx(t), nc, "ORDERS", backup.Dir(dir), backup.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx(t), "orders.late", []byte("after the backup")); err != nil {
		t.Fatal(err)
	}
	if _, err := backup.Restore(ctx(t), nc, backup.Dir(dir), backup.RestoreOptions{}); !errors.Is(err, backup.ErrStreamExists) {
		t.Fatalf("restore over an existing stream: %v, want ErrStreamExists", err)
	}
	info, err := js.Stream(ctx(t), "ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	if st := info.CachedInfo().State; st.LastSeq != workloadN+1 {
		t.Fatalf("the existing stream's last sequence is %d, want %d", st.LastSeq, workloadN+1)
	}
}

// TestBackupIsWholeOrAbsent: a backup never lands over something, and a
// failed one leaves nothing where it was to go nor beside it. Careless
// variant watched failing: writing into dir directly (a cancelled backup
// left it behind, holding the archive it had begun).
func TestBackupIsWholeOrAbsent(t *testing.T) {
	s := testnats.Start(t, 0)
	nc, js := connect(t, s)
	fillOrders(t, js)
	parent := t.TempDir()
	dir := filepath.Join(parent, "orders")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := backup.Take(ctx(t), nc, "ORDERS", backup.Dir(dir), backup.Options{}); !errors.Is(err, backup.ErrExists) {
		t.Fatalf("a backup into an existing directory: %v, want ErrExists", err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := backup.Take(cancelled, nc, "ORDERS", backup.Dir(dir), backup.Options{}); err == nil {
		t.Fatal("a cancelled backup succeeded")
	}
	if _, err := backup.Take(ctx(t), nc, "MISSING", backup.Dir(dir), backup.Options{}); err == nil {
		t.Fatal("a backup of a missing stream succeeded")
	}
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Fatalf("failed backups left %v", left)
	}
}

// TestRestoreRefusesAnArchiveItsManifestDoesNotDescribe: one changed byte
// in the archive is refused before anything is sent, and no stream is
// made. Careless variant watched failing: no check, which leaves it to
// the server's decoder ("s2: corrupt input, crc mismatch", code 10062,
// after the restore began; a change the compression's checksums do not
// cover would go through).
func TestRestoreRefusesAnArchiveItsManifestDoesNotDescribe(t *testing.T) {
	s := testnats.Start(t, 0)
	nc, js := connect(t, s)
	fillOrders(t, js)
	dir := filepath.Join(t.TempDir(), "orders")
	if _, err := backup.Take(ctx(t), nc, "ORDERS", backup.Dir(dir), backup.Options{}); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, jsm.SnapshotDataFile)
	b, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	if err := os.WriteFile(archive, b, 0o600); err != nil {
		t.Fatal(err)
	}
	to := testnats.Start(t, 0)
	nc2, js2 := connect(t, to)
	if _, err := backup.Restore(ctx(t), nc2, backup.Dir(dir), backup.RestoreOptions{}); !errors.Is(err, backup.ErrChecksum) {
		t.Fatalf("restore of a changed archive: %v, want ErrChecksum", err)
	}
	if _, err := js2.Stream(ctx(t), "ORDERS"); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("after a refused restore the stream: %v, want none", err)
	}
}

// TestBackupKeepsToItsRate: a backup paced at 1 MiB/s takes the time its
// archive's size says at that rate, and is whole; so does its restore,
// paced alike. Careless variants watched failing: MaxBytesPerSecond not
// passed to the writer (the 1.5 MiB backup took 170 ms), nor to the
// restore's reader (114 ms).
func TestBackupKeepsToItsRate(t *testing.T) {
	s := testnats.Start(t, 0)
	nc, js := connect(t, s)
	c := ctx(t)
	if _, err := js.CreateStream(c, jetstream.StreamConfig{Name: "BULK", Subjects: []string{"bulk"}}); err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 64<<10)
	for i := range 24 {
		if _, err := rand.Read(payload); err != nil { // incompressible: the archive is as large
			t.Fatal(err)
		}
		if _, err := js.Publish(c, "bulk", payload); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	const rate = 1 << 20
	dir := backup.Dir(filepath.Join(t.TempDir(), "bulk"))
	m, err := backup.Take(c, nc, "BULK", dir, backup.Options{MaxBytesPerSecond: rate})
	if err != nil {
		t.Fatal(err)
	}
	took, due := m.Finished.Sub(m.Started), time.Duration(float64(m.DataSize)/rate*float64(time.Second))
	if took < due*8/10 {
		t.Fatalf("%d bytes at %d B/s took %v, want about %v", m.DataSize, rate, took, due)
	}
	if m.Messages != 24 {
		t.Fatalf("the paced backup holds %d messages, want 24", m.Messages)
	}

	nc2, _ := connect(t, testnats.Start(t, 0))
	began := time.Now()
	state, err := backup.Restore(c, nc2, dir, backup.RestoreOptions{MaxBytesPerSecond: rate})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took < due*8/10 || state.Msgs != 24 {
		t.Fatalf("the paced restore took %v for %d messages, want about %v for 24", took, state.Msgs, due)
	}
}
