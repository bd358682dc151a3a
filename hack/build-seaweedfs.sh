#!/usr/bin/env bash
# Builds SeaweedFS's `weed` command (hack/seaweedfs, its own module) into
# bin/seaweedfs/weed, once per pinned version. Its S3 gateway is the object
# store the backup tests write to (test/s3server); nothing of SeaweedFS is
# kept in this repository.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/bin/seaweedfs
stamp=$out/.version

# The version is the one hack/seaweedfs/go.mod pins: one place to bump it.
version=$(cd hack/seaweedfs && go list -m -f '{{.Version}}' github.com/seaweedfs/seaweedfs)
source=$(cat hack/seaweedfs/go.mod hack/seaweedfs/go.sum | sha256sum | cut -c1-16)
want="seaweedfs=$version module=$source"
if [[ -x $out/weed && "$(cat "$stamp" 2>/dev/null)" == "$want" ]]; then
  exit 0
fi

echo ">> building SeaweedFS ($version) from the Go module proxy into bin/seaweedfs."
echo ">> The first build takes about 4 minutes on 2 cores; later runs reuse bin/seaweedfs and the Go build cache."
mkdir -p "$out"
(cd hack/seaweedfs && go build -trimpath -ldflags "-s -w" -o "$out/weed.new" github.com/seaweedfs/seaweedfs/weed)
mv "$out/weed.new" "$out/weed"
echo "$want" >"$stamp"
