//go:build tools

// Package seaweedfs pins SeaweedFS, whose `weed` command serves the
// S3-compatible object store the backup tests write to. It is built from the
// Go module proxy by hack/build-seaweedfs.sh; nothing of SeaweedFS is kept in
// this repository.
package seaweedfs

import _ "github.com/seaweedfs/seaweedfs/weed"
