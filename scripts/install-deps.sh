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
#   python3-pip                 python3 -m pip, a real pip through the proxy (proxy-core's PipThroughProxyTest)
#   nghttp2-client              nghttp, a real HTTP/2 client of the proxy (Http2ClientsTest)
#   chromium                    a real headless browser that renders the audit report (cli's AuditReportTest)
#   bind9-dnsutils              dig, a real resolver client of the proxy's DNS stub
#   golang-go, musl-tools       a static Go client and a static musl client, resolvers other than glibc's
#                               inside a sandbox (cli's RunCaptureResolversTest)
#   squid-openssl               a real parent proxy for upstream.proxy chaining (proxy-core's ParentProxyTest)
#   skopeo, umoci, runc         copy, unpack and run the OCI image the build makes (image's ImageRunTest)
# and, from the npm registry, @grpc/grpc-js (a real grpc-node client through the proxy, proxy-core's
# GrpcTest), kubernetes-models and yaml (the Kubernetes API schemas the manifests are validated against offline,
# examples' KubernetesManifestsTest) into $SALLYPORT_TEST_NODE_MODULES (default /var/cache/sallyport-test/node).
set -euo pipefail
need=()
for pair in curl:curl openssl:openssl git:git bwrap:bubblewrap unshare:util-linux nft:nftables ip:iproute2 \
            sysctl:procps sha256sum:coreutils /usr/lib/cni/bridge:containernetworking-plugins python3:python3 \
            getent:libc-bin mvn:maven wget:wget node:nodejs npm:npm /usr/bin/javac:default-jdk-headless \
            nghttp:nghttp2-client chromium:chromium dig:bind9-dnsutils /usr/bin/go:golang-go /usr/bin/musl-gcc:musl-tools \
            /usr/sbin/squid:squid-openssl skopeo:skopeo umoci:umoci runc:runc; do
  cmd=${pair%%:*}; pkg=${pair##*:}
  command -v "$cmd" >/dev/null 2>&1 || need+=("$pkg")
done
/usr/bin/python3 -c 'import ensurepip' 2>/dev/null || need+=(python3-venv)
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing ${need[*]} (expected: run as root, or 'sudo apt-get install ${need[*]}')" >&2
    exit 1
  fi
  echo "install-deps: installing ${need[*]}" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

node_dir=${SALLYPORT_TEST_NODE_MODULES:-/var/cache/sallyport-test/node}
for spec in @grpc/grpc-js@1.14.7 kubernetes-models@5.1.0 yaml@2.9.1; do
  name=${spec%@*} version=${spec##*@}
  if [ ! -f "$node_dir/node_modules/$name/package.json" ] \
      || ! grep -q "\"version\": \"$version\"" "$node_dir/node_modules/$name/package.json"; then
    if mkdir -p "$node_dir" 2>/dev/null && [ -w "$node_dir" ]; then
      echo "install-deps: installing $name $version into $node_dir" >&2
      npm install --silent --no-audit --no-fund --prefix "$node_dir" "$spec" >/dev/null
    else
      echo "install-deps: cannot write $node_dir for $name (expected: run as root, or set SALLYPORT_TEST_NODE_MODULES)" >&2
      exit 1
    fi
  fi
done
