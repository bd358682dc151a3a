// Command etcd is etcd's own main, built from the Go module proxy for the
// test control plane. It lives in its own module for the same reason as
// hack/k8sbins: etcd's server graph has no place in the operator's go.mod.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
