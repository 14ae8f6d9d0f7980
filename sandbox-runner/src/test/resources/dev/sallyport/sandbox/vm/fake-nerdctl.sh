#!/bin/bash
# Test stand-in for nerdctl (which this test machine cannot install): a "container" is a network namespace
# attached to the sandbox bridge by CNI's own plugins, chained as nerdctl's conflist chains them (bridge with
# host-local IPAM, then firewall with ingressPolicy same-bridge, then tuning; with --internal the bridge has no
# isGateway and the IPAM no default route, as nerdctl >= 2.1.4 writes it). The plugins' side effects on the host
# (ip_forward, CNI-ISOLATION-STAGE-* rules, /var/lib/cni/networks/NAME) are therefore real.
# --ip goes to the plugins as nerdctl's OCI hook passes it (CNI_ARGS IgnoreUnknown=1;IP=...), so host-local's static
# address is real too. Everything else (bridge, nftables table, proxy, probe parsing, teardown) is the real runner.
# Flags the test can set in the state folder: old-naming (inspect names another bridge), rm-fails (rm -f fails
# and leaves the container running), ps-fails (the container list cannot be read), no-image (the image is not
# on the host until it is pulled; pulling missing.example/none:1 fails).
# @STATE@ and @CNI@ are replaced by the test.
set -u
state=@STATE@
cnidir=@CNI@
mkdir -p "$state/containers"
{ printf '%s' "$*" | tr '\n' ' '; echo; } >> "$state/calls.log"
bridge_of() { printf 'br-%s' "$(printf %s "$1" | sha256sum | cut -c1-12)"; }
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
case "$1 $2" in
  "network create")
    for last; do :; done
    prev=""; internal=false; subnet=""; gw=""
    for a; do
      case "$prev" in --gateway) gw=$a;; --subnet) subnet=$a;; esac
      [ "$a" = --internal ] && internal=true
      prev=$a
    done
    python3 - "$last" "$(bridge_of "$last")" "$subnet" "$gw" "$internal" > "$state/$last.conflist" <<'PY'
import json, sys
name, bridge, subnet, gw, internal = sys.argv[1:6]
internal = internal == "true"
ipam = {"type": "host-local", "ranges": [[{"subnet": subnet, "gateway": gw}]]}
br = {"type": "bridge", "bridge": bridge, "hairpinMode": True, "ipam": ipam}
if not internal:
    br["isGateway"] = True
    ipam["routes"] = [{"dst": "0.0.0.0/0"}]
plugins = [br] + ([] if internal else [{"type": "portmap", "capabilities": {"portMappings": True}}])
plugins += [{"type": "firewall", "ingressPolicy": "same-bridge"}, {"type": "tuning"}]
print(json.dumps({"cniVersion": "1.0.0", "name": name, "plugins": plugins}, indent=2))
PY
    exit 0;;
  "image inspect")
    for last; do :; done
    [ -e "$state/pulled-$(printf %s "$last" | tr /: __)" ] || [ ! -e "$state/no-image" ]; exit $?;;
  "pull --")
    if [ "$3" = missing.example/none:1 ]; then echo "pull failed: not found" >&2; exit 1; fi
    echo "pulled $3 (progress would show here)"; touch "$state/pulled-$(printf %s "$3" | tr /: __)"; exit 0;;
  "network inspect")
    for last; do :; done
    if [ -e "$state/old-naming" ]; then sed "s/br-[0-9a-f]\{12\}/nerdctl1/" "$state/$last.conflist"
    else cat "$state/$last.conflist"; fi
    exit 0;;
  "network rm")
    ip link del dev "$(bridge_of "$3")" 2>/dev/null; rm -f "$state/$3.conflist"; exit 0;;
  "rm -f")
    if [ -e "$state/rm-fails" ]; then echo "time=x level=fatal msg=\"cannot access containerd socket\"" >&2; exit 1; fi
    shift 2
    for name; do
      f="$state/containers/$name"
      if alive "$f"; then kill -9 "$(cat "$f")"; fi
    done
    exit 0;;
  "ps -a")
    if [ -e "$state/ps-fails" ]; then echo "time=x level=fatal msg=\"cannot access containerd socket\"" >&2; exit 1; fi
    for f in "$state"/containers/*; do
      [ -e "$f" ] || continue
      if alive "$f"; then basename "$f"; fi
    done
    exit 0;;
esac
[ "$1" = run ] || { echo "fake nerdctl: unsupported: $*" >&2; exit 64; }
shift
name=''; net=''; ip=''; entrypoint=''; env=()
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break;;
    --rm|-i|-t|--read-only) shift;;
    --name) name=$2; shift 2;;
    --network) net=$2; shift 2;;
    --ip) ip=$2; shift 2;;
    --entrypoint) entrypoint=$2; shift 2;;
    -e) env+=("$2"); shift 2;;
    -*) shift 2;;
    *) break;;
  esac
done
shift   # the image
ns="spf-$$"
chain() {
  python3 - "$1" "$state/$net.conflist" "$ns" "$cnidir" "$state/$ns.result" "$ip" > "$state/cni-$1.out" 2>&1 <<'PY'
import json, os, subprocess, sys
command, conflist, ns, cnidir, saved, ip = sys.argv[1:7]
conf = json.load(open(conflist))
plugins = conf["plugins"] if command == "ADD" else list(reversed(conf["plugins"]))
prev = None if command == "ADD" else (json.load(open(saved)) if os.path.exists(saved) else None)
env = dict(os.environ, CNI_COMMAND=command, CNI_CONTAINERID=ns, CNI_NETNS="/var/run/netns/" + ns,
           CNI_IFNAME="eth0", CNI_PATH=cnidir)
if ip:
    env["CNI_ARGS"] = "IgnoreUnknown=1;IP=" + ip   # what nerdctl's OCI hook passes for --ip (go-cni WithArgs)
for plugin in plugins:
    if plugin["type"] == "portmap":
        continue
    net = dict(plugin, cniVersion=conf["cniVersion"], name=conf["name"])
    if prev is not None:
        net["prevResult"] = prev
    run = subprocess.run([os.path.join(cnidir, plugin["type"])], input=json.dumps(net).encode(), env=env,
                         capture_output=True)
    if run.returncode != 0:
        sys.stderr.write(plugin["type"] + ": " + run.stdout.decode() + run.stderr.decode())
        sys.exit(1)
    if command == "ADD":
        prev = json.loads(run.stdout)
if command == "ADD":
    json.dump(prev, open(saved, "w"))
PY
}
ip netns add "$ns"
ip -n "$ns" link set lo up
if ! chain ADD; then cat "$state/cni-ADD.out" >&2; chain DEL; ip netns del "$ns"; exit 125; fi
if [ -n "$entrypoint" ]; then set -- "$entrypoint" "$@"; fi
env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "${env[@]}" ip netns exec "$ns" "$@" &
echo $! > "$state/containers/$name"
wait $!
code=$?
rm -f "$state/containers/$name"
chain DEL
ip netns del "$ns"
exit $code
