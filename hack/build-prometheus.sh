#!/usr/bin/env bash
# Builds the Prometheus server (hack/prometheus, its own module) into
# bin/prometheus/prometheus, once per pinned version. The end-to-end tests
# scrape the loopback cluster with it and the scrape-cost benchmark reads
# its own scrape figures; nothing of Prometheus's is kept in this repository.
#
# Two build choices keep it small and quick on two cores:
#   - no `builtinassets` tag: the web UI's files are not embedded (the tests
#     speak to the HTTP API only, which is all there without them);
#   - `remove_all_sd,enable_kubernetes_sd`: Prometheus's own tags that link
#     Kubernetes service discovery alone (plus the always-present file and
#     HTTP discovery), leaving out the cloud SDKs nothing here can reach.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
mod=github.com/prometheus/prometheus
out=$root/bin/prometheus
stamp=$out/.version
tags=remove_all_sd,enable_kubernetes_sd

# The version is the one hack/prometheus/go.mod pins: one place to bump it.
version=$(cd hack/prometheus && go list -m -f '{{.Version}}' "$mod")
source=$(cat hack/prometheus/go.mod hack/prometheus/go.sum hack/prometheus/*.go | sha256sum | cut -c1-16)
want="prometheus=$version tags=$tags module=$source"
if [[ -x $out/prometheus && "$(cat "$stamp" 2>/dev/null)" == "$want" ]]; then
  exit 0
fi

echo ">> building Prometheus ($version, Kubernetes discovery only, no web UI assets) from the Go module proxy into bin/prometheus."
echo ">> The first build takes about 5 CPU-minutes (3 to 10 minutes on 2 cores, with the machine's load); later runs reuse bin/prometheus and the Go build cache."
mkdir -p "$out"
# Prometheus's version package is filled as its own release build fills it,
# so /api/v1/status/buildinfo names the version the tests ran.
ldflags="-s -w -X github.com/prometheus/common/version.Version=${version#v} -X github.com/prometheus/common/version.Branch=module-proxy"
(cd hack/prometheus && go build -trimpath -tags "$tags" -ldflags "$ldflags" -o "$out/prometheus.new" "$mod/cmd/prometheus")
mv "$out/prometheus.new" "$out/prometheus"
echo "$want" >"$stamp"
