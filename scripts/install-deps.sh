#!/usr/bin/env bash
# Installs the Debian packages that the tests drive for real. Idempotent; needs root (CI runs as root).
#   curl, openssl, git          real clients of the proxy and the CA
#   bubblewrap, util-linux      the process sandbox (bwrap) and the attacks run inside it (unshare)
#   nftables, iproute2, procps  the VM backend's host-side network pinning (nft, ip, sysctl)
#   containernetworking-plugins CNI's bridge plugin, which attaches test namespaces as nerdctl would
#   python3, libc-bin           in-sandbox attack scripts (sockets, ctypes), getent for DNS attempts
#   maven                       the build itself, and Debian's mvn inside a sandbox (RunToolsMavenTest)
#   wget, nodejs, npm           everyday tools run inside a sandbox (cli's RunTools*Test)
#   default-jdk-headless        the distribution's javac, for mvn and a Java program inside a sandbox
#   python3-venv                python3 -m venv (ensurepip) inside a sandbox
#   bind9-dnsutils              dig, a real resolver client of the proxy's DNS stub
set -euo pipefail
need=()
for pair in curl:curl openssl:openssl git:git bwrap:bubblewrap unshare:util-linux nft:nftables ip:iproute2 \
            sysctl:procps sha256sum:coreutils /usr/lib/cni/bridge:containernetworking-plugins python3:python3 \
            getent:libc-bin mvn:maven wget:wget node:nodejs npm:npm /usr/bin/javac:default-jdk-headless \
            dig:bind9-dnsutils; do
  cmd=${pair%%:*}; pkg=${pair##*:}
  command -v "$cmd" >/dev/null 2>&1 || need+=("$pkg")
done
/usr/bin/python3 -c 'import ensurepip' 2>/dev/null || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing ${need[*]} (expected: run as root, or 'sudo apt-get install ${need[*]}')" >&2
    exit 1
  fi
  echo "install-deps: installing ${need[*]}" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
