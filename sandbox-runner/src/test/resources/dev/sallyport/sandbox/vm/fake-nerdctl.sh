#!/bin/bash
# Test stand-in for nerdctl (which this test machine cannot install): a "container" is a network namespace
# attached to the sandbox bridge by CNI's own plugins, chained from the conflist it wrote in nerdctl's format and
# place (NETCONF/nerdctl-NAME.conflist: bridge with host-local IPAM, then firewall with ingressPolicy same-bridge, then
# tuning; with --internal the bridge has no isGateway and the IPAM no routes, as nerdctl >= 2.1.4 writes it), read
# again at each run as nerdctl's OCI hook does: what the runner changed in it (the guest's routes) takes effect. The plugins' side effects on the host
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
    prev=""; internal=false; subnet=""; gw=""; label=""
    for a; do
      case "$prev" in --gateway) gw=$a;; --subnet) subnet=$a;; --label) label=$a;; esac
      [ "$a" = --internal ] && internal=true
      prev=$a
    done
    mkdir -p "$state/net.d"
    python3 - "$last" "$subnet" "$gw" "$internal" "$label" > "$state/net.d/nerdctl-$last.conflist" <<'PY'
# As nerdctl's netutil writes it (Go's json.MarshalIndent with two spaces, struct fields in declaration order,
# the IPAM map's keys sorted, empty and false fields left out), 0644, no final newline.
import hashlib, json, sys
name, subnet, gw, internal, label = sys.argv[1:6]
internal = internal == "true"
nid = hashlib.sha256(name.encode()).hexdigest()
ipam = {"ranges": [[{"gateway": gw, "subnet": subnet}]]}
if not internal:
    ipam["routes"] = [{"dst": "0.0.0.0/0"}]
ipam["type"] = "host-local"
br = {"type": "bridge", "bridge": "br-" + nid[:12]}
if not internal:
    br["isGateway"] = True
br["hairpinMode"] = True
br["ipam"] = ipam
plugins = [br] + ([] if internal else [{"type": "portmap", "capabilities": {"portMappings": True}}])
plugins += [{"type": "firewall", "ingressPolicy": "same-bridge"}, {"type": "tuning"}]
key, _, value = label.partition("=")
conf = {"cniVersion": "1.0.0", "name": name, "nerdctlID": nid}
if label:
    conf["nerdctlLabels"] = {key: value}
conf["plugins"] = plugins
sys.stdout.write(json.dumps(conf, indent=2))
PY
    chmod 0644 "$state/net.d/nerdctl-$last.conflist"
    exit 0;;
  "image inspect")
    for last; do :; done
    [ -e "$state/pulled-$(printf %s "$last" | tr /: __)" ] || [ ! -e "$state/no-image" ]; exit $?;;
  "pull --")
    if [ "$3" = missing.example/none:1 ]; then echo "pull failed: not found" >&2; exit 1; fi
    echo "pulled $3 (progress would show here)"; touch "$state/pulled-$(printf %s "$3" | tr /: __)"; exit 0;;
  "network inspect")
    # --mode=native: a JSON array (four-space indent) of {CNI, NerdctlID, NerdctlLabels, File, Containers}.
    for last; do :; done
    file="$state/net.d/nerdctl-$last.conflist"
    python3 - "$file" <<'PY' | if [ -e "$state/old-naming" ]; then sed "s/br-[0-9a-f]\{12\}/nerdctl1/"; else cat; fi
import json, sys
conf = json.load(open(sys.argv[1]))
net = {"CNI": conf, "NerdctlID": conf.get("nerdctlID"), "NerdctlLabels": conf.get("nerdctlLabels"),
       "File": sys.argv[1], "Containers": None}
print(json.dumps([net], indent=4))
PY
    exit 0;;
  "network rm")
    ip link del dev "$(bridge_of "$3")" 2>/dev/null; rm -f "$state/net.d/nerdctl-$3.conflist"; exit 0;;
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
  python3 - "$1" "$state/net.d/nerdctl-$net.conflist" "$ns" "$cnidir" "$state/$ns.result" "$ip" > "$state/cni-$1.out" 2>&1 <<'PY'
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
