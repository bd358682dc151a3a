package main

import (
	"bytes"
	"fmt"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Build is what an image is made of: the static binary for each platform
// and the facts its labels carry. Nothing else goes in, so the same
// inputs give the same digest.
type Build struct {
	// Binaries holds the operator's binary for each architecture
	// (GOARCH), all for linux.
	Binaries map[string][]byte
	// BackupBinaries holds kubenats-backup, the backups' data path, for
	// the same architectures: a binary of its own, since it links
	// nats-server, which the operator does not. Optional only for tests
	// of the image's layout.
	BackupBinaries map[string][]byte
	// Source, Revision and Version become the OCI labels; Created (the
	// commit's time) is every time in the image.
	Source, Revision, Version string
	Created                   time.Time
}

// architectures is the order of the index's manifests: fixed, so that
// the index's bytes do not depend on a map's order.
var architectures = []string{"amd64", "arm64"}

// Index builds the multi-platform image index.
func (b Build) Index() (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	n := 0
	for _, arch := range architectures {
		bin, ok := b.Binaries[arch]
		if !ok {
			continue
		}
		backup, ok := b.BackupBinaries[arch]
		if !ok && len(b.BackupBinaries) > 0 {
			return nil, fmt.Errorf("linux/%s: no kubenats-backup binary", arch)
		}
		img, err := b.image(arch, bin, backup)
		if err != nil {
			return nil, fmt.Errorf("linux/%s: %w", arch, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}},
		})
		n++
	}
	if n != len(b.Binaries) || n == 0 {
		return nil, fmt.Errorf("binaries for %d architectures given, %d of them known (%v)", len(b.Binaries), n, architectures)
	}
	return idx, nil
}

// image is one platform's image: one layer, the non-root user, the
// binary as entrypoint, and the labels.
func (b Build) image(arch string, binary, backup []byte) (v1.Image, error) {
	files, err := rootFS(binary, backup)
	if err != nil {
		return nil, err
	}
	raw, err := layerTar(files, b.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(raw)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: b.Created},
			CreatedBy: "kubenats hack/image: the static operator binary, CA roots, passwd",
		},
	})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", arch
	cfg.Created = v1.Time{Time: b.Created}
	cfg.Config.User = fmt.Sprintf("%d:%d", nonRootID, nonRootID)
	cfg.Config.Entrypoint = []string{binaryPath}
	cfg.Config.Cmd = []string{"manager"}
	cfg.Config.WorkingDir = "/"
	cfg.Config.Env = []string{"PATH=/"}
	cfg.Config.Labels = b.labels()
	return mutate.ConfigFile(img, cfg)
}

// labels are the OCI annotations' keys, as image labels: where the image
// comes from and which commit and version it is.
func (b Build) labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "kubenats",
		"org.opencontainers.image.description": "The kubenats operator: NATS with JetStream on Kubernetes",
		"org.opencontainers.image.source":      b.Source,
		"org.opencontainers.image.revision":    b.Revision,
		"org.opencontainers.image.version":     b.Version,
		"org.opencontainers.image.created":     b.Created.UTC().Format(time.RFC3339),
	}
}
