#!/usr/bin/env bash
# Builds cert-manager's controllers (hack/certmanager, its own module) into
# bin/cert-manager/controller and places cert-manager's CRDs, read from the
# Go module cache, into bin/cert-manager/crds, once per pinned version. The
# loopback cluster and envtest run them; nothing of cert-manager's is kept
# in this repository.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
mod=github.com/cert-manager/cert-manager
out=$root/bin/cert-manager
stamp=$out/.version

# The version is the one hack/certmanager/go.mod pins: one place to bump it.
version=$(cd hack/certmanager && go list -m -f '{{.Version}}' "$mod")
# Our main.go is part of the stamp: a change to it rebuilds.
source=$(cat hack/certmanager/go.mod hack/certmanager/go.sum hack/certmanager/*.go | sha256sum | cut -c1-16)
want="cert-manager=$version main=$source"
if [[ -x $out/controller && -f $out/crds/cert-manager.io_certificates.yaml && "$(cat "$stamp" 2>/dev/null)" == "$want" ]]; then
  exit 0
fi

echo ">> building cert-manager's controllers ($version) from the Go module proxy into bin/cert-manager."
echo ">> The first build takes about 2 minutes on 2 cores; later runs reuse bin/cert-manager and the Go build cache."
mkdir -p "$out"
(cd hack/certmanager && go build -trimpath -ldflags "-s -w" -o "$out/controller" .)

src=$(cd hack/certmanager && go mod download -json "$mod@$version" | jq -r .Dir)/deploy/crds
rm -rf "$out/crds"
mkdir -p "$out/crds"
# The module cache is read-only; install gives the copies a normal mode.
install -m 0644 "$src"/*.yaml "$out/crds/"
echo "$want" >"$stamp"
