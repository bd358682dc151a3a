#!/usr/bin/env bash
# Builds natscli's `nats` command (hack/natscli, its own module) into
# bin/natscli/nats, once per pinned version. The backup tests restore what
# `nats stream backup` wrote, and have it restore what kubenats wrote;
# nothing of natscli's is kept in this repository.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/bin/natscli
stamp=$out/.version

# The version is the one hack/natscli/go.mod pins: one place to bump it.
version=$(cd hack/natscli && go list -m -f '{{.Version}}' github.com/nats-io/natscli)
source=$(cat hack/natscli/go.mod hack/natscli/go.sum | sha256sum | cut -c1-16)
want="natscli=$version module=$source"
if [[ -x $out/nats && "$(cat "$stamp" 2>/dev/null)" == "$want" ]]; then
  exit 0
fi

echo ">> building natscli ($version) from the Go module proxy into bin/natscli."
echo ">> The first build takes a few minutes on 2 cores; later runs reuse bin/natscli and the Go build cache."
mkdir -p "$out"
(cd hack/natscli && go build -trimpath -ldflags "-s -w" -o "$out/nats.new" github.com/nats-io/natscli/nats)
mv "$out/nats.new" "$out/nats"
echo "$want" >"$stamp"
