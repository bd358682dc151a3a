package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
)

var created = time.Date(2026, 12, 6, 1, 2, 3, 0, time.UTC)

func testBuild(bins map[string][]byte) Build {
	return Build{Binaries: bins, Source: "https://github.com/kubenats/kubenats", Revision: "abc123", Version: "v0.1.0", Created: created}
}

// The same inputs give the same digest, and so do the layout and the
// archive written twice. The careless variant, layer times taken from
// time.Now (or an archive walked in directory order with real mtimes),
// fails: the digests differ between the two builds a second apart.
func TestSameInputsSameDigest(t *testing.T) {
	bins := map[string][]byte{"amd64": []byte("amd64 binary"), "arm64": []byte("arm64 binary")}
	digests := make([]string, 2)
	archives := make([][32]byte, 2)
	for i := range digests {
		idx, err := testBuild(bins).Index()
		if err != nil {
			t.Fatal(err)
		}
		d, err := idx.Digest()
		if err != nil {
			t.Fatal(err)
		}
		digests[i] = d.String()
		dir := t.TempDir()
		if err := writeLayout(filepath.Join(dir, "oci"), "ghcr.io/kubenats/kubenats:v0.1.0", idx); err != nil {
			t.Fatal(err)
		}
		if err := writeArchive(filepath.Join(dir, "oci"), filepath.Join(dir, "a.tar"), created); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "a.tar"))
		if err != nil {
			t.Fatal(err)
		}
		archives[i] = sha256.Sum256(raw)
		time.Sleep(1100 * time.Millisecond) // a careless build's clock moves on
	}
	if digests[0] != digests[1] {
		t.Fatalf("two builds of the same inputs: %s and %s", digests[0], digests[1])
	}
	if archives[0] != archives[1] {
		t.Fatal("two archives of the same layout differ")
	}
	other := map[string][]byte{"amd64": []byte("amd64 binary, changed"), "arm64": []byte("arm64 binary")}
	idx, err := testBuild(other).Index()
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := idx.Digest(); d.String() == digests[0] {
		t.Fatal("another binary gave the same digest")
	}
}

// Each platform's image is laid out as the install expects: the binary at
// /kubenats as entrypoint, /kubenats-backup beside it, user 65532:65532,
// the CA bundle, the OCI labels, and the index names both platforms.
func TestImageLayout(t *testing.T) {
	b := testBuild(map[string][]byte{"amd64": []byte("A"), "arm64": []byte("B")})
	b.BackupBinaries = map[string][]byte{"amd64": []byte("bA"), "arm64": []byte("bB")}
	idx, err := b.Index()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 2 || m.Manifests[0].Platform.Architecture != "amd64" || m.Manifests[1].Platform.Architecture != "arm64" {
		t.Fatalf("index manifests = %+v", m.Manifests)
	}
	for i, want := range []string{"A", "B"} {
		img, err := idx.Image(m.Manifests[i].Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Config.User != "65532:65532" || cfg.Config.Entrypoint[0] != "/kubenats" || cfg.Architecture != m.Manifests[i].Platform.Architecture {
			t.Errorf("config = %+v", cfg.Config)
		}
		for k, v := range map[string]string{
			"org.opencontainers.image.source":   "https://github.com/kubenats/kubenats",
			"org.opencontainers.image.revision": "abc123",
			"org.opencontainers.image.version":  "v0.1.0",
		} {
			if cfg.Config.Labels[k] != v {
				t.Errorf("label %s = %q, want %q", k, cfg.Config.Labels[k], v)
			}
		}
		layers, err := img.Layers()
		if err != nil || len(layers) != 1 {
			t.Fatalf("layers = %d, %v", len(layers), err)
		}
		rc, err := layers[0].Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]*tar.Header{}
		data := map[string][]byte{}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name] = h
			data[h.Name], _ = io.ReadAll(tr)
			if !h.ModTime.Equal(created) {
				t.Errorf("%s mtime %v, want the commit's %v", h.Name, h.ModTime, created)
			}
		}
		rc.Close()
		if string(data["kubenats"]) != want || files["kubenats"].Mode != 0o755 {
			t.Errorf("/kubenats = %q mode %o", data["kubenats"], files["kubenats"].Mode)
		}
		if string(data["kubenats-backup"]) != "b"+want || files["kubenats-backup"].Mode != 0o755 {
			t.Errorf("/kubenats-backup = %q", data["kubenats-backup"])
		}
		if n := strings.Count(string(data["etc/ssl/certs/ca-certificates.crt"]), "BEGIN CERTIFICATE"); n < 100 {
			t.Errorf("CA bundle holds %d certificates", n)
		}
		if !strings.Contains(string(data["etc/passwd"]), "nonroot:x:65532:65532:") {
			t.Errorf("passwd = %q", data["etc/passwd"])
		}
		if files["tmp/"] == nil || files["tmp/"].Mode != 0o1777 {
			t.Error("no world-writable /tmp")
		}
	}
}

// The layout written names the image as the install does, in the
// annotations containerd's import reads.
func TestLayoutNamesTheImage(t *testing.T) {
	idx, err := testBuild(map[string][]byte{"amd64": []byte("A")}).Index()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "oci")
	if err := writeLayout(dir, "ghcr.io/kubenats/kubenats:v0.1.0", idx); err != nil {
		t.Fatal(err)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	outer, _ := p.ImageIndex()
	m, err := outer.IndexManifest()
	if err != nil || len(m.Manifests) != 1 {
		t.Fatalf("index.json: %v %v", m, err)
	}
	for _, k := range []string{annotationRefName, annotationContainerdName} {
		if m.Manifests[0].Annotations[k] != "ghcr.io/kubenats/kubenats:v0.1.0" {
			t.Errorf("annotation %s = %q", k, m.Manifests[0].Annotations[k])
		}
	}
}

// The SBOM lists the modules linked into a real binary, read from its
// build information.
func TestSBOMListsTheBinarysModules(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "image")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+runtime.GOOS)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	raw, err := sbom(bin, "v0.1.0", "abc123", created)
	if err != nil {
		t.Fatal(err)
	}
	var doc spdxDocument
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range doc.Packages {
		names = append(names, p.Name+"@"+p.VersionInfo)
	}
	all := strings.Join(names, " ")
	for _, want := range []string{"github.com/google/go-containerregistry@v0.22.1", "golang.org/x/crypto/x509roots/fallback@"} {
		if !strings.Contains(all, want) {
			t.Errorf("SBOM lacks %s: %s", want, all)
		}
	}
	if doc.SPDXVersion != "SPDX-2.3" || !bytes.Contains(raw, []byte(`"DESCRIBES"`)) {
		t.Error("not an SPDX 2.3 document describing the binary")
	}
}
