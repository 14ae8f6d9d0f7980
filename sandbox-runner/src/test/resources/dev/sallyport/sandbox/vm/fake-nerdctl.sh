#!/bin/bash
# Test stand-in for nerdctl (which this test machine cannot install): a "container" is a network namespace
# attached to the sandbox bridge by CNI's own bridge plugin (host-local IPAM, isGateway, no ipMasq: the
# conflist nerdctl writes), so the plugin's reuse of the runner's pre-made bridge is exercised for real.
# Everything else (bridge, nftables table, proxy, probe parsing, teardown) is the real runner.
# @STATE@ and @CNI@ are replaced by the test.
set -u
state=@STATE@
cnidir=@CNI@
{ printf '%s' "$*" | tr '\n' ' '; echo; } >> "$state/calls.log"
bridge_of() { printf 'br-%s' "$(printf %s "$1" | sha256sum | cut -c1-12)"; }
case "$1 $2" in
  "network create")
    for last; do :; done
    prev=""
    for a; do case "$prev" in --gateway) echo "$a" > "$state/$last.gw";; --subnet) echo "$a" > "$state/$last.subnet";; esac; prev=$a; done
    exit 0;;
  "network inspect")
    for last; do :; done
    printf '[{"name":"%s","plugins":[{"type":"bridge","bridge":"%s","isGateway":true,"ipMasq":false}]}]\n' \
      "$last" "$(if [ -e "$state/old-naming" ]; then echo nerdctl1; else bridge_of "$last"; fi)"
    exit 0;;
  "network rm")
    ip link del dev "$(bridge_of "$3")" 2>/dev/null; rm -f "$state/$3.gw"; exit 0;;
  "rm -f") exit 0;;
esac
[ "$1" = run ] || { echo "fake nerdctl: unsupported: $*" >&2; exit 64; }
shift
name=''; net=''; entrypoint=''
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break;;
    --rm|-i|-t|--read-only) shift;;
    --name) name=$2; shift 2;;
    --network) net=$2; shift 2;;
    --entrypoint) entrypoint=$2; shift 2;;
    -*) shift 2;;
    *) break;;
  esac
done
shift   # the image
gw=$(cat "$state/$net.gw")
subnet=$(cat "$state/$net.subnet")
ns="spf-$$"
conf='{"cniVersion":"1.0.0","name":"'"$net"'","type":"bridge","bridge":"'"$(bridge_of "$net")"'","isGateway":true,'
conf=$conf'"ipMasq":false,"hairpinMode":true,"ipam":{"type":"host-local","routes":[{"dst":"0.0.0.0/0"}],'
conf=$conf'"ranges":[[{"subnet":"'"$subnet"'","gateway":"'"$gw"'"}]],"dataDir":"'"$state/ipam"'"}}'
cni() {
  printf %s "$conf" | CNI_COMMAND=$1 CNI_CONTAINERID="$ns" CNI_NETNS="/var/run/netns/$ns" CNI_IFNAME=eth0 \
    CNI_PATH="$cnidir" "$cnidir/bridge" > "$state/cni-$1.out" 2>&1
}
ip netns add "$ns"
ip -n "$ns" link set lo up
if ! cni ADD; then cat "$state/cni-ADD.out" >&2; ip netns del "$ns"; exit 125; fi
if [ -n "$entrypoint" ]; then ip netns exec "$ns" "$entrypoint" "$@"; else ip netns exec "$ns" "$@"; fi
code=$?
cni DEL
ip netns del "$ns"
exit $code
