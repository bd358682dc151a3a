#!/usr/bin/env bash
# Installs, from Debian's packages, what the real node (test/realnode) runs
# beside the Kubernetes binaries this project builds: containerd and runc
# (the container runtime), the CNI plugins (bridge, host-local, loopback,
# portmap), iptables (kube-proxy's and the kubelet's rules) and conntrack
# (kube-proxy clears UDP entries with it). A package already installed is
# left alone, so this is cheap before every test run. Needs root, as the
# real node itself does; without root it says so and does nothing.
set -euo pipefail

packages=(containerd runc containernetworking-plugins iptables conntrack)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo ">> not root: the real node's packages (${missing[*]}) are not installed and test/realnode will skip."
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo ">> no apt-get: install ${missing[*]} by hand for test/realnode."
  exit 0
fi
echo ">> installing the real node's packages from Debian: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# --no-install-recommends: containerd recommends nothing the node uses.
# Debian's containerd package starts no daemon here (no systemd as init);
# the real node runs its own containerd with its own directories.
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
