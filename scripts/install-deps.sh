#!/usr/bin/env bash
# Installs the Debian packages that the tests drive for real. Idempotent; needs root (CI runs as root).
set -euo pipefail
need=()
for pair in curl:curl openssl:openssl bwrap:bubblewrap nft:nftables ip:iproute2 git:git mvn:maven python3:python3 getent:libc-bin unshare:util-linux; do
  cmd=${pair%%:*}; pkg=${pair##*:}
  command -v "$cmd" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing ${need[*]} (expected: run as root, or 'sudo apt-get install ${need[*]}')" >&2
    exit 1
  fi
  echo "install-deps: installing ${need[*]}" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# VM backend tests: python3 (in-namespace clients), sysctl (sandbox bridge setup), sha256sum, and CNI's bridge
# plugin (the stand-in nerdctl attaches its network namespaces through it, as nerdctl does).
vm_need=()
for pair in python3:python3 sysctl:procps sha256sum:coreutils /usr/lib/cni/bridge:containernetworking-plugins; do
  cmd=${pair%%:*}; pkg=${pair##*:}
  command -v "$cmd" >/dev/null 2>&1 || vm_need+=("$pkg")
done
if [ ${#vm_need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing ${vm_need[*]} (expected: run as root, or 'sudo apt-get install ${vm_need[*]}')" >&2
    exit 1
  fi
  echo "install-deps: installing ${vm_need[*]}" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${vm_need[@]}" >/dev/null
fi
