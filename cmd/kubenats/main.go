// Command kubenats is the kubenats operator (`manager`), its offline
// renderer (`render`), NACK's converter (`convert`), the metrics container of server pods (`exporter`)
// and `version`, in one binary.
package main

import (
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `kubenats runs NATS with JetStream on Kubernetes.

Usage:
  kubenats manager [flags]      run the operator
  kubenats render -f FILE       print the manifests of the NatsClusters in FILE
  kubenats convert -f FILE      print NACK's JetStream resources in FILE as kubenats'
  kubenats exporter [flags]     serve one server's metrics (the metrics container)
  kubenats version              print the version

Run 'kubenats COMMAND -h' for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "manager":
		return runManager(args[1:], stderr)
	case "render":
		return runRender(args[1:], stdout, stderr)
	case "convert":
		return runConvert(args[1:], stdout, stderr)
	case "exporter":
		return runExporter(args[1:], stderr)
	case "version":
		fmt.Fprintln(stdout, version)
		return 0
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "kubenats: unknown command %q\n\n%s", args[0], usage)
	return 2
}
