#!/usr/bin/env bash
# The soak: a mixed load through Sallyport for a bounded time, failing when the proxy's memory, file descriptors
# or threads keep growing, or when Netty reports a leaked buffer. All traffic stays on 127.0.0.1.
#
#   benchmarks/soak/run.sh                       # one hour at 8 operations/s, a sample every 60 s
#   SOAK_SECONDS=120 SOAK_SAMPLE=10 benchmarks/soak/run.sh    # the CI soak
#
# Knobs (environment): SOAK_SECONDS (3600), SOAK_RATE (operations started per second, 8; at most 16 in flight),
# SOAK_SAMPLE (seconds between samples, 60), SOAK_HOSTS (distinct host names, each a certificate minted, 2000),
# SOAK_LEAK_LEVEL (Netty's leak detection in the proxy, paranoid), SOAK_WORK (folder for the policy, the proxy's
# log, the audit log and samples.csv; a new one under /tmp by default), SOAK_NICE (10).
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
. "$root/scripts/java-home.sh"
sallyport_find_java
jar="$root/benchmarks/target/benchmarks.jar"
if [ ! -f "$jar" ] || [ -n "${SOAK_REBUILD:-}" ]; then
  (cd "$root" && mvn -B -ntp -q -pl benchmarks -am package -DskipTests) >&2
fi
work=${SOAK_WORK:-$(mktemp -d /tmp/sallyport-soak.XXXXXX)}
mkdir -p "$work"
echo "soak: work folder $work" >&2
exec nice -n "${SOAK_NICE:-10}" "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED \
  "-Dsoak.leakLevel=${SOAK_LEAK_LEVEL:-paranoid}" -cp "$jar" dev.sallyport.benchmarks.soak.Soak \
  "$work" "${SOAK_SECONDS:-3600}" "${SOAK_RATE:-8}" "${SOAK_SAMPLE:-60}" "${SOAK_HOSTS:-2000}"
