package main

import (
	"archive/tar"
	"bytes"
	"encoding/pem"
	"fmt"
	"slices"
	"time"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// The operator runs as this user and group: not root, and the same id the
// install's securityContext names, so that the image runs as shipped even
// where the pod does not set runAsUser.
const (
	nonRootID   = 65532
	nonRootName = "nonroot"
)

// binaryPath is where the operator's binary lives in the image, and the
// image's entrypoint; backupBinaryPath is the backups' data path, which a
// backup Job names as its command.
const (
	binaryPath       = "/kubenats"
	backupBinaryPath = "/kubenats-backup"
)

// caBundlePath is where Go (and most TLS clients) look for the system's
// roots on Linux.
const caBundlePath = "/etc/ssl/certs/ca-certificates.crt"

// entry is one file or directory of the image's only layer.
type entry struct {
	path string // without the leading slash
	mode int64
	dir  bool
	data []byte
}

// rootFS lists the layer's files in the order they are written. The image
// has no base: the binary is static, and what it needs beside it is a CA
// bundle for the endpoints it dials with public certificates (an object
// store), a passwd and group that name its user, and a /tmp. The order and
// every header field are fixed, so the same binary gives the same bytes.
func rootFS(binary, backup []byte) ([]entry, error) {
	roots, err := caBundle()
	if err != nil {
		return nil, err
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:/home/%s:/sbin/nologin\n",
		nonRootName, nonRootID, nonRootID, nonRootName, nonRootName)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", nonRootName, nonRootID)
	files := []entry{
		{path: "etc/", dir: true, mode: 0o755},
		{path: "etc/group", mode: 0o644, data: []byte(group)},
		{path: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{path: "etc/ssl/", dir: true, mode: 0o755},
		{path: "etc/ssl/certs/", dir: true, mode: 0o755},
		{path: caBundlePath[1:], mode: 0o644, data: roots},
		{path: "home/", dir: true, mode: 0o755},
		{path: "home/" + nonRootName + "/", dir: true, mode: 0o700},
		{path: binaryPath[1:], mode: 0o755, data: binary},
		// Sticky and world-writable, as /tmp is everywhere; the install
		// mounts an emptyDir over it when the root is read-only.
		{path: "tmp/", dir: true, mode: 0o1777},
	}
	if backup != nil {
		// After the operator's binary, before tmp/: the layer's order is
		// the paths' order.
		files = slices.Insert(files, len(files)-1, entry{path: backupBinaryPath[1:], mode: 0o755, data: backup})
	}
	return files, nil
}

// caBundle is the Mozilla NSS roots as PEM, from the pinned
// golang.org/x/crypto/x509roots module: a version of the module is a
// version of the bundle, so the image does not depend on the build
// machine's own store. A root NSS trusts only with a constraint (a
// distrust-after date) is left out: a PEM file cannot say the
// constraint, and trusting it without would trust more than NSS does.
func caBundle() ([]byte, error) {
	var out bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		if err := pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate}); err != nil {
			return nil, err
		}
	}
	if out.Len() == 0 {
		return nil, fmt.Errorf("the CA bundle is empty")
	}
	return out.Bytes(), nil
}

// layerTar writes entries as an uncompressed tar with fixed times and
// owners: file owners are root (the user runs the binary, never writes
// it), and every time is mtime, the commit's time.
func layerTar(entries []entry, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name:    e.path,
			Mode:    e.mode,
			ModTime: mtime.Truncate(time.Second),
			Format:  tar.FormatUSTAR,
		}
		if e.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if e.path == "home/"+nonRootName+"/" {
			h.Uid, h.Gid = nonRootID, nonRootID
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if !e.dir {
			if _, err := tw.Write(e.data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
