package upstream

import (
	"embed"
	"os"
	"path/filepath"
	"testing"
)

// nackExamples are the project's own NACK-shaped examples: one file per
// feature NACK's published examples show (a stream, a mirror, placement,
// sources, a pull and a push consumer, connection settings read from files
// in NACK's pod, an Account with a TLS Secret and the resources naming
// it), under the same file names, written for kubenats' tests.
//
//go:embed nack/*
var nackExamples embed.FS

// NACKExamples is a directory of NACK's examples: the real ones under
// Env's directory when set, else a copy of the stand-ins.
func NACKExamples(t testing.TB) string {
	t.Helper()
	if d := dir(t); d != "" {
		return filepath.Join(d, upstreamNACK)
	}
	out := t.TempDir()
	entries, err := nackExamples.ReadDir("nack")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := nackExamples.ReadFile("nack/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, e.Name()), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
