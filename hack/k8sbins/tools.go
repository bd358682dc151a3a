//go:build tools

// Package k8sbins pins the Kubernetes commands that the tests build from the
// Go module proxy: the control plane (hack/build-k8s-bins.sh) and the real
// node's kubelet, kube-scheduler and kube-proxy (hack/build-node-bins.sh),
// all of one version. It lives in its own module so that the
// operator's dependency graph does not carry all of k8s.io/kubernetes.
package k8sbins

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
