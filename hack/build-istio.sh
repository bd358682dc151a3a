#!/usr/bin/env bash
# Builds Istio's sidecar injector (hack/istioinject, its own module) into
# bin/istio/inject and places Istio's CRDs, read from the istio.io/api
# module in the Go module cache, into bin/istio/crds, once per pinned
# version. The loopback cluster runs the injector as its mutating admission
# webhook (Options{Istio: true}); nothing of Istio's is kept in this
# repository.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/bin/istio
stamp=$out/.version

# The versions are the ones hack/istioinject/go.mod pins: one place to bump them.
istio=$(cd hack/istioinject && go list -m -f '{{.Version}}' istio.io/istio)
api=$(cd hack/istioinject && go list -m -f '{{.Version}}' istio.io/api)
# Our main.go is part of the stamp: a change to it rebuilds.
source=$(cat hack/istioinject/go.mod hack/istioinject/go.sum hack/istioinject/*.go | sha256sum | cut -c1-16)
want="istio=$istio api=$api main=$source"
if [[ -x $out/inject && -f $out/crds/istio.yaml && "$(cat "$stamp" 2>/dev/null)" == "$want" ]]; then
  exit 0
fi

echo ">> building Istio's sidecar injector ($istio) from the Go module proxy into bin/istio."
echo ">> The first build takes about 3 minutes on 2 cores; later runs reuse bin/istio and the Go build cache."
mkdir -p "$out"
(cd hack/istioinject && go build -trimpath -ldflags "-s -w" -o "$out/inject" .)

src=$(cd hack/istioinject && go mod download -json "istio.io/api@$api" | jq -r .Dir)/kubernetes/customresourcedefinitions.gen.yaml
rm -rf "$out/crds"
mkdir -p "$out/crds"
# The module cache is read-only; install gives the copy a normal mode.
install -m 0644 "$src" "$out/crds/istio.yaml"
echo "$want" >"$stamp"
