//go:build tools

// Package coredns pins CoreDNS, the real node's cluster DNS server
// (test/realnode), built from the Go module proxy by
// hack/build-node-bins.sh. Its own module: CoreDNS's dependencies stay out
// of the operator's and the Kubernetes binaries' graphs.
package coredns

import (
	_ "github.com/coredns/coredns"
)
