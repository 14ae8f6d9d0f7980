#!/usr/bin/env bash
# Start-up of `sallyport run -- true`: the median of N runs (default 20) with the run's own proxy, and attached to
# a running `sallyport proxy` (registered through its admin listener). Loopback only; a state folder of its own.
#   benchmarks/attach-start.sh [N]
# With a second argument, a built checkout of another commit: its attached run and this one's alternate
# (A B A B ...) on the same proxy, so that both medians come from the same minutes of a busy machine.
#   benchmarks/attach-start.sh 20 /path/to/other/checkout
# ATTACH_FLAGS adds flags to the attached runs' `sallyport run` (e.g. ATTACH_FLAGS=--no-capture).
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
n=${1:-20}
other=${2:-}
sp="$root/bin/sallyport"
work=$(mktemp -d)
export SALLYPORT_HOME="$work/state"
mkdir -p "$SALLYPORT_HOME" "$work/ws"
trap 'kill "${proxy_pid:-0}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
. "$root/benchmarks/shared-proxy.sh"
start_shared_proxy 23128 29901
median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f", m/1000}'; }
measure() {
  for _ in $(seq 1 "$n"); do
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1 || { echo "attach-start: failed: $*" >&2; exit 1; }
    echo $(( ($(date +%s%N) - s) / 1000000 ))
  done | median
}
cd "$work/ws"
attach=(run --proxy 127.0.0.1:23128 --proxy-admin 127.0.0.1:29901 --proxy-token "$work/admin-token"
  --ca-cert "$SALLYPORT_HOME/ca/ca.pem" ${ATTACH_FLAGS:-} -- true)
once() {   # one run's milliseconds, appended to the file $1
  local out=$1 s
  shift
  s=$(date +%s%N)
  "$@" >/dev/null 2>&1 || { echo "attach-start: failed: $*" >&2; exit 1; }
  echo $(( ($(date +%s%N) - s) / 1000000 )) >> "$out"
}
if [ -n "$other" ]; then
  for sallyport in "$other/bin/sallyport" "$sp"; do
    "$sallyport" "${attach[@]}" >/dev/null 2>&1 || true   # the first run may train the start-up caches: not counted
  done
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  for _ in $(seq 1 "$n"); do
    once "$work/a" "$other/bin/sallyport" "${attach[@]}"
    once "$work/b" "$sp" "${attach[@]}"
  done
  printf '%-34s %s\n' "sallyport run --proxy ... -- true" "median of $n, alternating, seconds"
  printf '%-34s %s\n' "A: $other" "$(median < "$work/a")"
  printf '%-34s %s\n' "B: $root" "$(median < "$work/b")"
  printf '%-34s %s, after: %s\n' "load average before" "$load_before" "$(cut -d' ' -f1-3 /proc/loadavg)"
  exit 0
fi
"$sp" run -- true >/dev/null 2>&1        # the first run may train the start-up cache: not counted
own=$(measure "$sp" run -- true)
attached=$(measure "$sp" "${attach[@]}")
rss=$(awk '/VmRSS/ {print $2}' "/proc/$(pgrep -P "$proxy_pid" java || echo "$proxy_pid")/status" 2>/dev/null || echo "?")
printf '%-34s %s\n' "sallyport run -- true" "median of $n, seconds"
printf '%-34s %s\n' "own proxy" "$own"
printf '%-34s %s\n' "attached (--proxy)" "$attached"
printf '%-34s %s KiB\n' "shared proxy RSS after the runs" "$rss"
