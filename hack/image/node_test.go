package main

import (
	"archive/tar"
	"io"
	"slices"
	"strings"
	"testing"
)

// The NATS images are laid out as the official ones, so that the command
// and the preStop hook kubenats renders ("nats-server" found on PATH) run
// in them as in the published images: the scratch image's binary at
// /nats-server with "/" on PATH and its config at /nats-server.conf, the
// alpine image's at /usr/local/bin/nats-server. Careless variants seen
// failing: the scratch image's PATH without "/" (a kubelet's exec of
// "nats-server" finds nothing), the alpine binary at /nats-server.
func TestNATSImagesAreLaidOutAsTheOfficialOnes(t *testing.T) {
	for _, tc := range []struct {
		img     nodeImage
		ref     string
		binary  string
		config  string
		pathDir string
	}{
		{natsScratch("2.15.3", []byte("bin")), "docker.io/library/nats:2.15.3", "nats-server", "nats-server.conf", "/"},
		{natsAlpine("2.15.3", []byte("bin")), "docker.io/library/nats:2.15.3-alpine", "usr/local/bin/nats-server", "etc/nats/nats-server.conf", "/usr/local/bin"},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			if tc.img.ref != tc.ref {
				t.Fatalf("ref = %q, want %q", tc.img.ref, tc.ref)
			}
			img, err := tc.img.image("amd64", created)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			var path []string
			for _, e := range cfg.Config.Env {
				if p, ok := strings.CutPrefix(e, "PATH="); ok {
					path = strings.Split(p, ":")
				}
			}
			if !slices.Contains(path, tc.pathDir) {
				t.Errorf("PATH %v lacks %s, where the binary is", path, tc.pathDir)
			}
			layers, err := img.Layers()
			if err != nil || len(layers) != 1 {
				t.Fatalf("layers = %d, %v", len(layers), err)
			}
			rc, err := layers[0].Uncompressed()
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			files := map[string]*tar.Header{}
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
			}
			if h := files[tc.binary]; h == nil || h.Mode != 0o755 {
				t.Errorf("no executable /%s in %v", tc.binary, keys(files))
			}
			if files[tc.config] == nil {
				t.Errorf("no /%s in %v", tc.config, keys(files))
			}
		})
	}
}

func keys(m map[string]*tar.Header) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
