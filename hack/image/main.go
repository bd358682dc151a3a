// Command image builds the kubenats operator's container image without
// Docker: from the static binaries `make image` compiles, an image on an
// empty base for each platform, joined in one OCI index, written as an OCI
// layout and as an archive under bin/image, with an SPDX SBOM of the Go
// modules beside it; `push` sends a built layout to a registry.
//
//	image build -ref R -out DIR -bin amd64=PATH -bin arm64=PATH -source URL -revision SHA -version V -created UNIX
//	image push -layout DIR -ref R
//	image node -out DIR -nats DIR -pause PATH -operator PATH -ref R -created UNIX (node.go)
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: image build|push|node [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = runBuild(os.Args[2:])
	case "push":
		err = runPush(os.Args[2:])
	case "node":
		err = runNode(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: build, push or node", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// binFlags collects -bin ARCH=PATH.
type binFlags map[string]string

func (b binFlags) String() string { return fmt.Sprint(map[string]string(b)) }
func (b binFlags) Set(v string) error {
	arch, path, ok := strings.Cut(v, "=")
	if !ok || arch == "" || path == "" {
		return fmt.Errorf("-bin %q: write ARCH=PATH", v)
	}
	b[arch] = path
	return nil
}

func runBuild(args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	bins := binFlags{}
	fs.Var(bins, "bin", "ARCH=PATH of a static linux binary (repeat per architecture)")
	backups := binFlags{}
	fs.Var(backups, "backup-bin", "ARCH=PATH of kubenats-backup's static linux binary (one per -bin)")
	ref := fs.String("ref", "", "the image's name, as the install names it")
	out := fs.String("out", "", "output directory")
	b := Build{}
	fs.StringVar(&b.Source, "source", "", "source repository URL (label)")
	fs.StringVar(&b.Revision, "revision", "", "commit (label)")
	fs.StringVar(&b.Version, "version", "", "version (label)")
	created := fs.String("created", "", "the commit's time, seconds since 1970: every time in the image")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *ref == "" || *out == "" || len(bins) == 0 || *created == "" {
		return fmt.Errorf("build needs -ref, -out, -created and at least one -bin")
	}
	if _, err := name.ParseReference(*ref, name.StrictValidation); err != nil {
		return fmt.Errorf("-ref: %w", err)
	}
	secs, err := strconv.ParseInt(*created, 10, 64)
	if err != nil {
		return fmt.Errorf("-created: %w", err)
	}
	b.Created = time.Unix(secs, 0).UTC()
	b.Binaries = map[string][]byte{}
	for arch, path := range bins {
		if b.Binaries[arch], err = os.ReadFile(path); err != nil {
			return err
		}
	}
	if len(backups) != len(bins) {
		return fmt.Errorf("build needs a -backup-bin for each -bin")
	}
	b.BackupBinaries = map[string][]byte{}
	for arch, path := range backups {
		if b.BackupBinaries[arch], err = os.ReadFile(path); err != nil {
			return err
		}
	}
	idx, err := b.Index()
	if err != nil {
		return err
	}
	layoutDir := filepath.Join(*out, "oci")
	if err := writeLayout(layoutDir, *ref, idx); err != nil {
		return err
	}
	archive := filepath.Join(*out, "kubenats.oci.tar")
	if err := writeArchive(layoutDir, archive, b.Created); err != nil {
		return err
	}
	anyBin := bins[architectures[0]]
	if anyBin == "" {
		for _, p := range bins {
			anyBin = p
		}
	}
	doc, err := sbom(anyBin, b.Version, b.Revision, b.Created)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "kubenats.spdx.json"), doc, 0o644); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s@%s\n  layout  %s\n  archive %s\n  sbom    %s\n", *ref, digest, layoutDir, archive, filepath.Join(*out, "kubenats.spdx.json"))
	return nil
}

// runPush sends the layout's index to a registry, with the credentials
// of the docker config (docker login, or DOCKER_CONFIG).
func runPush(args []string) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	dir := fs.String("layout", "", "OCI layout written by build")
	ref := fs.String("ref", "", "where to push, e.g. registry.example.com/kubenats:v0.1.0")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *ref == "" {
		return fmt.Errorf("push needs -layout and -ref")
	}
	to, err := name.ParseReference(*ref, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("-ref: %w", err)
	}
	p, err := layout.FromPath(*dir)
	if err != nil {
		return err
	}
	outer, err := p.ImageIndex()
	if err != nil {
		return err
	}
	m, err := outer.IndexManifest()
	if err != nil {
		return err
	}
	if len(m.Manifests) != 1 {
		return fmt.Errorf("%s holds %d indexes, want the one build writes", *dir, len(m.Manifests))
	}
	idx, err := outer.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		return err
	}
	if err := remote.WriteIndex(to, idx, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return err
	}
	fmt.Printf("pushed %s@%s\n", to, m.Manifests[0].Digest)
	return nil
}
