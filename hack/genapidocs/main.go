// Command genapidocs writes docs/api.md, the API reference, from the Go
// types of one API package (api/v1alpha1): each kind, and each type a kind
// reaches, with its fields' JSON names, types, doc comments and the
// kubebuilder markers that shape the CRD (defaults, validation, CEL rules).
//
// It reads the source with go/parser rather than the generated CRDs so that
// the reference keeps the Go doc comments' paragraphs and links each field
// to the type it names. The output depends only on the source: types appear
// in the order they are declared (files by name), so `make generate` and
// verify-generate see no diff unless the API changed.
//
//	go run ./hack/genapidocs -out docs/api.md api/v1alpha1
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("out", "", "file to write (standard output when empty)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: genapidocs [-out FILE] API_PACKAGE_DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	dir := flag.Arg(0)
	pkg, err := loadPackage(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genapidocs:", err)
		os.Exit(1)
	}
	var doc bytes.Buffer
	writeReference(&doc, pkg, dir)
	if *out == "" {
		os.Stdout.Write(doc.Bytes())
		return
	}
	if err := os.WriteFile(*out, doc.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "genapidocs:", err)
		os.Exit(1)
	}
}
