package backupreport

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func goodManifest() *Manifest {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	return &Manifest{Stream: "ORDERS", FirstSeq: 1, LastSeq: 10, Messages: 10, Bytes: 900, Consumers: 1,
		DataFile: "stream.arc.s2", DataSize: 512, SHA256: strings.Repeat("ab", 32), Started: t0, Finished: t0.Add(time.Second)}
}

// TestDecodeTakesOnlyWhatASnapshotCouldSay: a termination message is the
// pod's word. Careless variant watched failing: the manifest's checks
// left out (six hostile manifests decoded).
func TestDecodeTakesOnlyWhatASnapshotCouldSay(t *testing.T) {
	encode := func(r Report) string {
		b, err := Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	good := encode(Report{Manifest: goodManifest()})
	if r, err := Decode(good); err != nil || r.Manifest.LastSeq != 10 {
		t.Fatalf("a good report: %+v, %v", r, err)
	}
	failed := encode(Failure(ReasonServerRefused, errors.New("stream not found (10059)")))
	if r, err := Decode(failed); err != nil || r.Reason != ReasonServerRefused {
		t.Fatalf("a failure: %+v, %v", r, err)
	}
	restored := encode(Report{Restored: &Restored{Stream: "ORDERS", Messages: 3, FirstSeq: 1, LastSeq: 3}})
	if r, err := Decode(restored); err != nil || r.Restored.LastSeq != 3 {
		t.Fatalf("a restore: %+v, %v", r, err)
	}
	long := Failure(ReasonFailed, errors.New(strings.Repeat("é", 4000)))
	if r, err := Decode(encode(long)); err != nil || len(r.Message) > maxMessage+len("…") {
		t.Fatalf("a long failure is cut and still decodes: %d bytes, %v", len(r.Message), err)
	}
	set := func(f func(*SetManifest)) string {
		m := &SetManifest{Streams: 2, Messages: 10, DataSize: 100, Started: time.Unix(1, 0), Finished: time.Unix(2, 0)}
		f(m)
		return encode(Report{Set: m})
	}
	if r, err := Decode(set(func(*SetManifest) {})); err != nil || r.Set == nil || r.Set.Streams != 2 {
		t.Fatalf("a set's report: %+v, %v", r, err)
	}
	mutate := func(f func(*Manifest)) string {
		m := goodManifest()
		f(m)
		return encode(Report{Manifest: m})
	}
	for name, msg := range map[string]string{
		"empty":               "",
		"not JSON":            "OOMKilled",
		"unknown field":       `{"reason":"BackupFailed","message":"x","extra":1}`,
		"unknown reason":      `{"reason":"Succeeded","message":"x"}`,
		"both":                `{"manifest":` + good[len(`{"manifest":`):len(good)-1] + `,"reason":"BackupFailed"}`,
		"restored and failed": `{"restored":{"stream":"A","messages":1,"firstSeq":1,"lastSeq":1},"reason":"StreamExists"}`,
		"restored nothing":    `{"restored":{"stream":"","messages":1,"firstSeq":1,"lastSeq":1}}`,
		"no checksum":         mutate(func(m *Manifest) { m.SHA256 = "" }),
		"short checksum":      mutate(func(m *Manifest) { m.SHA256 = "abcd" }),
		"foreign data file":   mutate(func(m *Manifest) { m.DataFile = "../../etc/passwd" }),
		"no stream":           mutate(func(m *Manifest) { m.Stream = "" }),
		"sequences":           mutate(func(m *Manifest) { m.FirstSeq, m.LastSeq = 9, 3 }),
		"time backwards":      mutate(func(m *Manifest) { m.Finished = m.Started.Add(-time.Second) }),
		"too long":            `{"reason":"BackupFailed","message":"` + strings.Repeat("x", MaxSize) + `"}`,
		"set and manifest":    `{"set":{"streams":0,"messages":0,"bytes":0,"consumers":0,"dataSize":0,"started":"2026-01-01T00:00:00Z","finished":"2026-01-01T00:00:01Z"},"manifest":` + good[len(`{"manifest":`):],
		"set below zero":      set(func(m *SetManifest) { m.Streams = -1 }),
		"set of no stream":    set(func(m *SetManifest) { m.Streams = 0 }),
		"set time backwards":  set(func(m *SetManifest) { m.Finished = m.Started.Add(-time.Second) }),
	} {
		if r, err := Decode(msg); err == nil {
			t.Errorf("%s: decoded as %+v, want an error", name, r)
		}
	}
}
