#!/usr/bin/env bash
# Memory of a shared `sallyport proxy` with N sandboxes attached at once (default 10): each `sallyport run --proxy`
# registers, sends one request through the proxy (refused by the empty policy: nothing leaves loopback) and stays
# attached until all N have; then the proxy's resident memory is read. Loopback only; a state folder of its own.
#   benchmarks/attach-ten.sh [N]
set -euo pipefail
shopt -s nullglob
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
n=${1:-10}
sp="$root/bin/sallyport"
work=$(mktemp -d)
export SALLYPORT_HOME="$work/state"
mkdir -p "$SALLYPORT_HOME"
pids=()
release() { for d in "$work"/ws-*/; do : > "$d/release"; done; }
trap 'release; kill "${proxy_pid:-0}" "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
. "$root/benchmarks/shared-proxy.sh"
start_shared_proxy 23138 29911
rss() { awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$(pgrep -P "$proxy_pid" java || echo "$proxy_pid")/status"; }
before=$(rss)
for i in $(seq 1 "$n"); do
  mkdir -p "$work/ws-$i"
  (cd "$work/ws-$i" && "$sp" run --proxy 127.0.0.1:23138 --proxy-admin 127.0.0.1:29911 \
    --proxy-token "$work/admin-token" --ca-cert "$SALLYPORT_HOME/ca/ca.pem" --identity "job-$i" -- sh -c \
    'curl -s -o /dev/null -w "%{http_code}\n" --noproxy "" http://127.0.0.1:9/ > answer; mv answer answered; n=0; while [ ! -e release ] && [ $n -lt 3000 ]; do sleep 0.1; n=$((n+1)); done' \
    >/dev/null 2>"$work/run-$i.log") &
  pids+=($!)
done
for _ in $(seq 1 1800); do
  answered=("$work"/ws-*/answered)
  done_count=${#answered[@]}
  [ "$done_count" -ge "$n" ] && break
  sleep 0.1
done
[ "$done_count" -ge "$n" ] || { echo "attach-ten: only $done_count of $n sandboxes answered" >&2; cat "$work"/run-*.log >&2; exit 1; }
during=$(rss)
answers=$(cat "$work"/ws-*/answered | sort | uniq -c | tr -s ' ' | tr '\n' ';')
release
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
pids=()
printf '%-44s %s\n' "shared proxy RSS before, MiB" "$before"
printf '%-44s %s\n' "shared proxy RSS with $n attached at once, MiB" "$during"
printf '%-44s %s\n' "answers inside the sandboxes" "$answers"
printf '%-44s %s\n' "runs that failed" "$failed"
