#!/usr/bin/env bash
# Builds the real node's Kubernetes binaries (kubelet, kube-scheduler,
# kube-proxy) from the same pinned k8s.io/kubernetes as the control plane
# (hack/k8sbins, hack/build-k8s-bins.sh: one module, so the Go build cache
# holds most of them already) and CoreDNS (hack/coredns) from the Go
# module proxy into bin/node, once per pinned version. test/realnode runs
# them with containerd and runc from Debian (hack/install-node-packages.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
K8S_VERSION=${K8S_VERSION:-v1.37.2}
COREDNS_VERSION=$(sed -n 's/^require github.com\/coredns\/coredns \(v[0-9.]*\)$/\1/p' hack/coredns/go.mod)
out=$root/bin/node
mkdir -p "$out"
stamp=$out/.versions
want="kubernetes=$K8S_VERSION coredns=$COREDNS_VERSION"

if [[ -x $out/kubelet && -x $out/kube-scheduler && -x $out/kube-proxy && -x $out/coredns && "$(cat "$stamp" 2>/dev/null)" == "$want" ]]; then
  exit 0
fi

echo ">> building kubelet, kube-scheduler, kube-proxy ($K8S_VERSION) and CoreDNS ($COREDNS_VERSION) from the Go module proxy into bin/node."
echo ">> After hack/build-k8s-bins.sh this takes about 10 minutes on 2 cores (about 30 cold); later runs reuse bin/node."

minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
vpkg=k8s.io/component-base/version
ldflags="-s -w -X $vpkg.gitVersion=$K8S_VERSION -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$minor"
began=$SECONDS
(
  cd hack/k8sbins
  for cmd in kubelet kube-scheduler kube-proxy; do
    go build -trimpath -ldflags "$ldflags" -o "$out/$cmd" "k8s.io/kubernetes/cmd/$cmd"
  done
)
(cd hack/coredns && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/coredns" github.com/coredns/coredns)
echo "$want" >"$stamp"
echo ">> bin/node built in $((SECONDS - began)) s."
