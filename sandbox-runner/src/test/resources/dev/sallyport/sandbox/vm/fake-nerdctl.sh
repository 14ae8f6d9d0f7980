#!/bin/bash
# Test stand-in for nerdctl (which this test machine cannot install): a "container" is a network namespace
# attached to the sandbox bridge by a veth pair, exactly what CNI's bridge plugin does for nerdctl. Everything
# else (bridge, nftables table, proxy, probe parsing, teardown) is the real runner. @STATE@ is replaced by the test.
set -u
state=@STATE@
{ printf '%s' "$*" | tr '\n' ' '; echo; } >> "$state/calls.log"
bridge_of() { printf 'br-%s' "$(printf %s "$1" | sha256sum | cut -c1-12)"; }
case "$1 $2" in
  "network create")
    for last; do :; done
    prev=""
    for a; do case "$prev" in --gateway) echo "$a" > "$state/$last.gw";; esac; prev=$a; done
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
case "$name" in *-probe) host=3;; *) host=2;; esac
addr="${gw%.*}.$host"
ns="spf-$$"
veth="spf$$"
ip netns add "$ns"
ip link add "$veth" type veth peer name "${veth}c"
ip link set "${veth}c" netns "$ns"
ip -n "$ns" link set "${veth}c" name eth0
ip -n "$ns" addr add "$addr/24" dev eth0
ip -n "$ns" link set eth0 up
ip -n "$ns" link set lo up
ip -n "$ns" route add default via "$gw"
ip link set "$veth" master "$(bridge_of "$net")"
ip link set "$veth" up
if [ -n "$entrypoint" ]; then ip netns exec "$ns" "$entrypoint" "$@"; else ip netns exec "$ns" "$@"; fi
code=$?
ip link del "$veth" 2>/dev/null
ip netns del "$ns"
exit $code
