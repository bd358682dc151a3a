#!/usr/bin/env bash
# make demo: kubenats on this machine. Builds what it needs, then runs
# hack/demo: a cluster, the operator, a 3-server NatsCluster with a Stream
# and a Consumer, a publish/consume round trip, and how to connect. Ctrl-C
# stops it and everything it started; DEMO_EXIT=1 exits after the round
# trip.
#
# NODE=loopback (the default): the loopback cluster, no container runtime;
# the operator runs in the demo's process.
# NODE=real (as root): a real node (kubelet, containerd, runc, CNI,
# kube-proxy, CoreDNS), the operator's image run from dist/install.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."
NODE=${NODE:-loopback}

step() { # step NAME COMMAND...: runs it, says how long it took
  local name=$1 began=$SECONDS
  shift
  "$@"
  echo ">> $name: $((SECONDS - began)) s"
}

case $NODE in
loopback)
  echo ">> building what is missing: the control plane (hack/build-k8s-bins.sh: kube-apiserver, kube-controller-manager, etcd from the Go module proxy, ~15 minutes on 2 cores the first time, seconds after) and nats-server (hack/build-nats-servers.sh, about a minute once)"
  step "control plane" hack/build-k8s-bins.sh
  step "nats-server" hack/build-nats-servers.sh
  ;;
real)
  if [[ $(id -u) -ne 0 ]]; then
    echo "make demo NODE=real needs root: the kubelet and containerd do" >&2
    exit 1
  fi
  echo ">> building what is missing: the control plane, the node (kubelet, kube-scheduler, kube-proxy, CoreDNS: about 10 minutes more the first time), Debian's containerd, runc, CNI plugins and iptables, and the images (NATS, pause, the operator)"
  step "control plane" hack/build-k8s-bins.sh
  step "nats-server" hack/build-nats-servers.sh
  step "node binaries" hack/build-node-bins.sh
  step "node packages" hack/install-node-packages.sh
  step "images" make --no-print-directory node-images
  ;;
*)
  echo "NODE is loopback or real, not $NODE" >&2
  exit 2
  ;;
esac
step "the demo itself" go build -o bin/kubenats-demo ./hack/demo
# exec: Ctrl-C reaches the demo itself, which stops what it started.
DEMO_NODE=$NODE exec bin/kubenats-demo
