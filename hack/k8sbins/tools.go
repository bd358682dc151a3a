//go:build tools

// Package k8sbins pins the Kubernetes control-plane commands that the tests
// build from the Go module proxy. It lives in its own module so that the
// operator's dependency graph does not carry all of k8s.io/kubernetes.
package k8sbins

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
