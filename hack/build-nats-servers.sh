#!/usr/bin/env bash
# Builds nats-server binaries from the Go module proxy into
# bin/nats-server/<version>/nats-server, one folder per version, for the
# loopback cluster (test/loopback), which runs the `nats` container of a pod
# as a real nats-server process chosen by the image tag.
#
# Versions: the operator's default (the upgrade target) and one older
# release (the upgrade start). Pass versions as arguments to build others.
# A version already built is skipped, so this is cheap to call before every
# test run.
#
# Each version is built twice: bin/nats-server/<v>/nats-server as Go builds
# it here (the loopback cluster's process), and bin/nats-server/<v>/static/
# nats-server with cgo off, a static binary that runs in an image with
# nothing else in it: the real node's NATS images (`make node-images`,
# hack/image's node command), laid out as the official ones.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

versions=("$@")
if [[ ${#versions[@]} -eq 0 ]]; then
  versions=(2.15.3 2.14.10)
fi

# build version folder cgo: nats-server v<version> into folder/nats-server
# unless it is there; cgo "0" builds it static, empty leaves Go's default.
build() {
  local v=$1 out=$2 cgo=$3
  if [[ -x $out/nats-server ]]; then
    return
  fi
  echo ">> building nats-server v$v${cgo:+ (static)} from the Go module proxy into ${out#"$root"/} (about a minute on 2 cores, once)."
  mkdir -p "$out"
  # The module has no replace directives, so `go install pkg@version` builds
  # it as released, outside this project's go.mod. Building into a scratch
  # folder and moving the result in last means an interrupted build never
  # leaves a binary that looks complete.
  tmp=$(mktemp -d "$root/bin/nats-server/.build-$v.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  CGO_ENABLED=${cgo:-$(go env CGO_ENABLED)} GOBIN=$tmp GOFLAGS=-trimpath go install -ldflags "-s -w" "github.com/nats-io/nats-server/v2@v$v"
  mv "$tmp/nats-server" "$out/nats-server"
  rm -rf "$tmp"
  trap - EXIT
}

for v in "${versions[@]}"; do
  v=${v#v}
  build "$v" "$root/bin/nats-server/$v" ""
  build "$v" "$root/bin/nats-server/$v/static" 0
done
