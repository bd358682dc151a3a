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
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

versions=("$@")
if [[ ${#versions[@]} -eq 0 ]]; then
  versions=(2.15.3 2.14.10)
fi

for v in "${versions[@]}"; do
  v=${v#v}
  out=$root/bin/nats-server/$v
  if [[ -x $out/nats-server ]]; then
    continue
  fi
  echo ">> building nats-server v$v from the Go module proxy into bin/nats-server/$v (about a minute on 2 cores, once)."
  mkdir -p "$out"
  # The module has no replace directives, so `go install pkg@version` builds
  # it as released, outside this project's go.mod. Building into a scratch
  # folder and moving the result in last means an interrupted build never
  # leaves a binary that looks complete.
  tmp=$(mktemp -d "$root/bin/nats-server/.build-$v.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  GOBIN=$tmp GOFLAGS=-trimpath go install -ldflags "-s -w" "github.com/nats-io/nats-server/v2@v$v"
  mv "$tmp/nats-server" "$out/nats-server"
  rm -rf "$tmp"
  trap - EXIT
done
