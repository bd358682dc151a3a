package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The images the real node (test/realnode) runs besides the operator's:
// nats-server laid out as the official images of nats-io/nats-docker, under
// the names kubenats renders by default, and the pod sandbox's pause image
// under the name containerd asks for. They are built from static binaries
// built here, never pulled: the node has no registry.

// natsConfig is the configuration the official images carry: a plain
// server with monitoring, as theirs. kubenats never uses it (it passes
// --config of its own); it is there so the layout is the official one.
const natsConfig = `# nats-server.conf of the real node's image, as the official image's
port: 4222
http_port: 8222
`

// PauseImage is the sandbox image containerd 1.6 asks for by default
// (its sandbox_image); the real node sets the same name in its config.
const PauseImage = "registry.k8s.io/pause:3.6"

// nodeImage is one single-platform image: its files, and how it runs.
type nodeImage struct {
	ref        string
	files      []entry
	entrypoint []string
	cmd        []string
	env        []string
	user       string
	what       string // the layer's history line
}

// natsScratch is nats:<v>: the official scratch image's layout, the binary
// at /nats-server, "/" on PATH, the config at /nats-server.conf.
func natsScratch(version string, binary []byte) nodeImage {
	return nodeImage{
		ref: "docker.io/library/nats:" + version,
		files: []entry{
			{path: "nats-server", mode: 0o755, data: binary},
			{path: "nats-server.conf", mode: 0o644, data: []byte(natsConfig)},
		},
		entrypoint: []string{"/nats-server"},
		cmd:        []string{"--config", "nats-server.conf"},
		env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/"},
		what:       "nats-server " + version + " as the official scratch image lays it out",
	}
}

// natsAlpine is nats:<v>-alpine, the name kubenats renders by default:
// the official alpine image's layout of nats-server, /usr/local/bin on
// PATH and the config in /etc/nats, without Alpine itself (no registry
// here to take it from; kubenats runs nothing else in the container: its
// command and preStop hook name nats-server alone).
func natsAlpine(version string, binary []byte) nodeImage {
	return nodeImage{
		ref: "docker.io/library/nats:" + version + "-alpine",
		files: []entry{
			{path: "etc/", dir: true, mode: 0o755},
			{path: "etc/nats/", dir: true, mode: 0o755},
			{path: "etc/nats/nats-server.conf", mode: 0o644, data: []byte(natsConfig)},
			{path: "tmp/", dir: true, mode: 0o1777},
			{path: "usr/", dir: true, mode: 0o755},
			{path: "usr/local/", dir: true, mode: 0o755},
			{path: "usr/local/bin/", dir: true, mode: 0o755},
			{path: "usr/local/bin/nats-server", mode: 0o755, data: binary},
		},
		cmd:  []string{"nats-server", "--config", "/etc/nats/nats-server.conf"},
		env:  []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		what: "nats-server " + version + " as the official alpine image lays it out",
	}
}

// pause is the sandbox image: hack/pause's static binary, as /pause.
func pause(binary []byte) nodeImage {
	return nodeImage{
		ref:        PauseImage,
		files:      []entry{{path: "pause", mode: 0o755, data: binary}},
		entrypoint: []string{"/pause"},
		user:       "65535:65535",
		what:       "kubenats hack/pause: holds the pod's namespaces",
	}
}

// image builds the single-platform image for arch.
func (n nodeImage) image(arch string, created time.Time) (v1.Image, error) {
	raw, err := layerTar(n.files, created)
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
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{Created: v1.Time{Time: created}, CreatedBy: n.what}})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", arch
	cfg.Created = v1.Time{Time: created}
	cfg.Config.Entrypoint, cfg.Config.Cmd, cfg.Config.Env, cfg.Config.User = n.entrypoint, n.cmd, n.env, n.user
	return mutate.ConfigFile(img, cfg)
}

// index wraps one image in an index naming its platform, as a registry
// serves it.
func singlePlatform(img v1.Image, arch string) v1.ImageIndex {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	return mutate.AppendManifests(idx, mutate.IndexAddendum{
		Add:        img,
		Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}},
	})
}

// runNode writes the real node's images as OCI archives into -out, one
// per image, for `ctr -n k8s.io images import`: nats:<v> and
// nats:<v>-alpine for every static nats-server in -nats, the pause image,
// and the operator's image (Build, as `make image` builds it, for one
// platform) under -ref.
func runNode(args []string) error {
	fs := flag.NewFlagSet("node", flag.ContinueOnError)
	out := fs.String("out", "", "output directory")
	arch := fs.String("arch", "amd64", "the node's GOARCH")
	natsDir := fs.String("nats", "", "folder of <version>/static/nats-server (hack/build-nats-servers.sh)")
	pauseBin := fs.String("pause", "", "hack/pause's static binary")
	operator := fs.String("operator", "", "the operator's static binary for -arch")
	backupBin := fs.String("backup", "", "kubenats-backup's static binary for -arch")
	ref := fs.String("ref", "", "the operator image's name, as the install names it")
	b := Build{}
	fs.StringVar(&b.Source, "source", "", "source repository URL (label)")
	fs.StringVar(&b.Revision, "revision", "", "commit (label)")
	fs.StringVar(&b.Version, "version", "", "version (label)")
	createdFlag := fs.String("created", "", "the commit's time, seconds since 1970: every time in the images")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *natsDir == "" || *pauseBin == "" || *operator == "" || *backupBin == "" || *ref == "" || *createdFlag == "" {
		return fmt.Errorf("node needs -out, -nats, -pause, -operator, -backup, -ref and -created")
	}
	secs, err := strconv.ParseInt(*createdFlag, 10, 64)
	if err != nil {
		return fmt.Errorf("-created: %w", err)
	}
	created := time.Unix(secs, 0).UTC()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	write := func(file, name string, idx v1.ImageIndex) error {
		dir := filepath.Join(*out, ".layout-"+file)
		defer os.RemoveAll(dir)
		if err := writeLayout(dir, name, idx); err != nil {
			return err
		}
		path := filepath.Join(*out, file+".oci.tar")
		if err := writeArchive(dir, path, created); err != nil {
			return err
		}
		fmt.Printf("  %-45s %s\n", name, path)
		return nil
	}
	var images []nodeImage
	versions, err := filepath.Glob(filepath.Join(*natsDir, "*", "static", "nats-server"))
	if err != nil {
		return err
	}
	if len(versions) == 0 {
		return fmt.Errorf("no %s/<version>/static/nats-server: run hack/build-nats-servers.sh", *natsDir)
	}
	for _, path := range versions {
		v := filepath.Base(filepath.Dir(filepath.Dir(path)))
		bin, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		images = append(images, natsScratch(v, bin), natsAlpine(v, bin))
	}
	pb, err := os.ReadFile(*pauseBin)
	if err != nil {
		return err
	}
	images = append(images, pause(pb))
	for _, n := range images {
		img, err := n.image(*arch, created)
		if err != nil {
			return fmt.Errorf("%s: %w", n.ref, err)
		}
		file := strings.NewReplacer("/", "_", ":", "_").Replace(strings.TrimPrefix(n.ref, "docker.io/library/"))
		if err := write(file, n.ref, singlePlatform(img, *arch)); err != nil {
			return err
		}
	}
	ob, err := os.ReadFile(*operator)
	if err != nil {
		return err
	}
	bb, err := os.ReadFile(*backupBin)
	if err != nil {
		return err
	}
	b.Created = created
	b.Binaries = map[string][]byte{*arch: ob}
	b.BackupBinaries = map[string][]byte{*arch: bb}
	idx, err := b.Index()
	if err != nil {
		return err
	}
	return write("kubenats", *ref, idx)
}
