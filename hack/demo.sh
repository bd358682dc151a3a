#!/usr/bin/env bash
# make demo: kubenats on this machine, no container runtime. Builds what it
# needs, then runs hack/demo: a loopback cluster, the operator, a 3-server
# NatsCluster with a Stream and a Consumer, a publish/consume round trip,
# and how to connect. Ctrl-C stops it and everything it started;
# DEMO_EXIT=1 exits after the round trip.
set -euo pipefail
cd "$(dirname "$0")/.."

echo ">> building missing binaries: hack/build-k8s-bins.sh (kube-apiserver, kube-controller-manager, etcd from the Go module proxy: ~15 minutes on 2 cores the first time, seconds after) and hack/build-nats-servers.sh (nats-server, about a minute once)"
hack/build-k8s-bins.sh
hack/build-nats-servers.sh
go build -o bin/kubenats-demo ./hack/demo
# exec: Ctrl-C reaches the demo itself, which stops what it started.
exec bin/kubenats-demo
