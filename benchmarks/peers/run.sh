#!/usr/bin/env bash
# Peer comparison: the same HTTPS load directly against an nginx upstream (the physical limit), through Squid
# bumping TLS, through mitmproxy and through Sallyport, all on loopback. Prints one table.
#
#   sudo benchmarks/peers/run.sh            # BENCH_DURATION=10 BENCH_WARMUP=3 BENCH_HOSTS=1000 BENCH_TARGETS=...
#
# Needs root (it installs Debian packages when missing, adds a marked block to /etc/hosts and removes it).
# Every process it starts is stopped on exit; every load run is bounded in time (and count).
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
DURATION=${BENCH_DURATION:-10}        # measured seconds per scenario and target
WARMUP=${BENCH_WARMUP:-3}             # unmeasured seconds before each time-bounded run
PROXY_WARMUP=${BENCH_PROXY_WARMUP:-20} # unmeasured seconds of load on each freshly started proxy (JIT, pools)
HOSTS=${BENCH_HOSTS:-1000}            # distinct host names for the minting scenario
WARM_HOSTS=${BENCH_WARM_HOSTS:-500}   # other distinct names each proxy sees during its warm-up
TARGETS=${BENCH_TARGETS:-"direct squid mitmproxy sallyport"}
SCENARIOS=${BENCH_SCENARIOS:-"keepalive handshake hosts body1m download h2"}
IDLE_TUNNELS=${BENCH_IDLE_TUNNELS:-10000}   # 0 skips the idle-tunnel RSS measurement
work=${BENCH_WORK:-$(mktemp -d /tmp/sallyport-peers.XXXXXX)}
# listeners below the ephemeral range this script sets (10000-65000), so no client socket can hold them
UP_PORT=7443 SQUID_PORT=7128 MITM_PORT=7129 SP_PORT=7130 SP_ADMIN=7901
HOSTS_MARK="sallyport-bench"

die() { echo "run.sh: $*" >&2; exit 1; }

# ---------- cleanup: every process we started, the /etc/hosts block, sysctls ----------
pids=()
sysctl_restore=()
cleanup() {
  set +e
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  done
  if grep -q "# BEGIN $HOSTS_MARK" /etc/hosts 2>/dev/null; then
    # rewrite in place: /etc/hosts is often a bind mount that cannot be replaced by rename
    kept=$(sed "/# BEGIN $HOSTS_MARK/,/# END $HOSTS_MARK/d" /etc/hosts)
    printf '%s\n' "$kept" > /etc/hosts
  fi
  for kv in "${sysctl_restore[@]}"; do sysctl -q -w "$kv" >/dev/null 2>&1; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------- tools ----------
[ "$(id -u)" = 0 ] || die "must run as root (expected: sudo; it installs packages and edits /etc/hosts)"
need=(nginx:nginx squid:squid-openssl mitmdump:mitmproxy wrk:wrk openssl:openssl curl:curl python3:python3)
missing=()
for pair in "${need[@]}"; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || [ -x "/usr/sbin/${pair%%:*}" ] || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get (expected: Debian/Ubuntu or these installed)"
  echo "run.sh: installing ${missing[*]}" >&2
  apt-get update -qq >/dev/null || die "apt-get update failed (expected: a reachable Debian mirror)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed"
fi
export PATH=$PATH:/usr/sbin
for pair in "${need[@]}"; do
  command -v "${pair%%:*}" >/dev/null || die "${pair%%:*} not found after install (expected: package ${pair#*:})"
done
squid -v | grep -q -- '--with-openssl' || die "squid is built without OpenSSL (expected: package squid-openssl)"
certgen=/usr/lib/squid/security_file_certgen
[ -x "$certgen" ] || die "$certgen missing (expected: from package squid-openssl)"
. "$root/scripts/java-home.sh"
sallyport_find_java >/dev/null || die "no JDK 25 found (expected: see scripts/java-home.sh)"
JAVA="$JAVA_HOME/bin/java"
jar="$root/benchmarks/target/benchmarks.jar"
if [ ! -f "$jar" ] || [ ! -f "$root/cli/target/sallyport.jar" ] || [ -n "${BENCH_REBUILD:-}" ]; then
  command -v mvn >/dev/null || die "mvn not found (expected: Apache Maven to build $jar)"
  echo "run.sh: building $jar and the sallyport jar" >&2
  (cd "$root" && mvn -B -ntp -q -DskipTests -Dmaven.javadoc.skip=true package -pl benchmarks,cli -am) >&2 \
    || die "building $jar failed"
fi
# Sallyport runs as users run it, through bin/sallyport; its first command trains the start-up cache (once per
# build), so that the start measured below is like every later start on a machine.
"$root/bin/sallyport" --version >/dev/null || die "bin/sallyport --version failed"
# Other work on the machine (compilers) would take most of the CPU from the processes measured: run everything
# this script starts at a higher priority (children inherit it). BENCH_NICE=0 turns that off.
renice -n "${BENCH_NICE:--10}" -p $$ >/dev/null || die "renice failed (expected: root)"
ulimit -n "$(ulimit -Hn)" || die "cannot raise the open-file limit to $(ulimit -Hn)"
fd_limit=$(ulimit -n)
if [ "$fd_limit" != unlimited ] && [ "$IDLE_TUNNELS" -gt $(( (fd_limit - 500) / 2 )) ]; then
  # the proxy holds two descriptors per intercepted tunnel (client and upstream)
  IDLE_TUNNELS=$(( (fd_limit - 500) / 2 ))
  echo "run.sh: open-file limit $fd_limit: idle tunnels lowered to $IDLE_TUNNELS" >&2
fi

for port in $UP_PORT $SQUID_PORT $MITM_PORT $SP_PORT $SP_ADMIN; do
  ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || die "127.0.0.1:$port is in use (expected: free for the benchmark)"
done

# ---------- kernel: many short connections on loopback ----------
for kv in net.ipv4.tcp_tw_reuse=1 "net.ipv4.ip_local_port_range=10000 65000" net.core.somaxconn=4096; do
  key=${kv%%=*}
  old=$(sysctl -n "$key" 2>/dev/null | tr '\t' ' ') || continue
  sysctl_restore+=("$key=$old")
  sysctl -q -w "$kv" >/dev/null 2>&1 || true
done

# ---------- test PKI: an upstream CA and server certificate, one interception CA per proxy (all EC P-256) ----------
chmod 755 "$work"
pki=$work/pki; mkdir -p "$pki"
new_ca() { # DIR NAME -> DIR/ca.pem DIR/ca.key
  mkdir -p "$1"
  openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$1/ca.key" \
    -out "$1/ca.pem" -days 2 -subj "/CN=$2" -addext "basicConstraints=critical,CA:true" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null || die "openssl: cannot create CA $2"
}
new_ca "$pki/upstream" "bench upstream CA"
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$pki/upstream/server.key" \
  -out "$pki/upstream/server.csr" -subj "/CN=bench.test" 2>/dev/null || die "openssl: server key"
printf 'subjectAltName=DNS:*.bench.test,DNS:bench.test,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:false\n' \
  > "$pki/upstream/server.ext"
openssl x509 -req -in "$pki/upstream/server.csr" -CA "$pki/upstream/ca.pem" -CAkey "$pki/upstream/ca.key" \
  -CAcreateserial -days 2 -extfile "$pki/upstream/server.ext" -out "$pki/upstream/server.pem" 2>/dev/null \
  || die "openssl: server certificate"
for p in squid mitmproxy sallyport; do new_ca "$pki/$p" "bench $p interception CA"; done
UP_CA=$pki/upstream/ca.pem

# ---------- host names: www.bench.test (one known host), h0001..hNNNN.bench.test, w0001..wNNNN.bench.test ----------
{
  echo "# BEGIN $HOSTS_MARK"
  echo "127.0.0.1 www.bench.test bench.test"
  for ((i = 1; i <= HOSTS; i += 10)); do
    line="127.0.0.1"
    for ((j = i; j < i + 10 && j <= HOSTS; j++)); do line+=" $(printf 'h%04d.bench.test' "$j")"; done
    echo "$line"
  done
  for ((i = 1; i <= WARM_HOSTS; i += 10)); do
    line="127.0.0.1"
    for ((j = i; j < i + 10 && j <= WARM_HOSTS; j++)); do line+=" $(printf 'w%04d.bench.test' "$j")"; done
    echo "$line"
  done
  echo "# END $HOSTS_MARK"
} >> /etc/hosts

wait_port() { # PORT PID NAME: bounded wait until something listens on 127.0.0.1:PORT
  for _ in $(seq 1 300); do
    kill -0 "$2" 2>/dev/null || die "$3 exited during start (see $work/$3.log)"
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  die "$3 did not listen on 127.0.0.1:$1 within 30 s (see $work/$3.log)"
}

# ---------- upstream: nginx over HTTPS on loopback ----------
www=$work/www; mkdir -p "$www"
head -c 128 /dev/urandom | base64 -w0 | head -c 128 > "$www/small"
head -c $((1 << 20)) /dev/urandom > "$www/1m"
truncate -s 256M "$www/large"   # sparse: no disk, served from the page cache
mkdir -p "$work/nginx"
cat > "$work/nginx/nginx.conf" <<EOF
worker_processes 1;
worker_rlimit_nofile $fd_limit;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx.log warn;
events { worker_connections $((fd_limit - 100)); }
http {
  access_log off;
  keepalive_requests 10000000;
  keepalive_timeout 120s;
  client_body_temp_path $work/nginx; proxy_temp_path $work/nginx; fastcgi_temp_path $work/nginx;
  uwsgi_temp_path $work/nginx; scgi_temp_path $work/nginx;
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:$UP_PORT ssl http2 default_server;   # h2 only for clients that ask (the h2 scenario)
    ssl_certificate $pki/upstream/server.pem;
    ssl_certificate_key $pki/upstream/server.key;
    root $www;
  }
}
EOF
nginx -c "$work/nginx/nginx.conf" -e "$work/nginx.log" >>"$work/nginx.log" 2>&1 &
pids+=($!); wait_port $UP_PORT $! nginx
curl -fsS --cacert "$UP_CA" "https://www.bench.test:$UP_PORT/small" -o /dev/null \
  || die "upstream check failed: curl https://www.bench.test:$UP_PORT/small (expected: 200)"

# ---------- the proxies ----------
start_squid() {
  local d=$work/squid; mkdir -p "$d"
  cp "$pki/squid/ca.pem" "$pki/squid/ca.key" "$d/"
  "$certgen" -c -s "$d/ssl_db" -M 64MB >/dev/null 2>&1 || die "$certgen -c failed"
  cat > "$d/squid.conf" <<EOF
http_port 127.0.0.1:$SQUID_PORT ssl-bump tls-cert=$d/ca.pem tls-key=$d/ca.key generate-host-certificates=on dynamic_cert_mem_cache_size=64MB
sslcrtd_program $certgen -s $d/ssl_db -M 64MB
sslcrtd_children 8 startup=1 idle=1
acl step1 at_step SslBump1
ssl_bump peek step1
ssl_bump bump all
tls_outgoing_options cafile=$UP_CA
http_access allow all
cache deny all
access_log daemon:$d/access.log squid
cache_log $d/cache.log
pid_filename $d/squid.pid
coredump_dir $d
max_filedescriptors $fd_limit
shutdown_lifetime 1 seconds
visible_hostname bench.test
EOF
  chown -R proxy:proxy "$d" 2>/dev/null || true
  squid -N -f "$d/squid.conf" >"$work/squid.log" 2>&1 &
  proxy_pid=$!; pids+=($proxy_pid); wait_port $SQUID_PORT $proxy_pid squid
  proxy_addr=127.0.0.1:$SQUID_PORT
}

start_mitmproxy() {
  local d=$work/mitmproxy; mkdir -p "$d"
  cat "$pki/mitmproxy/ca.key" "$pki/mitmproxy/ca.pem" > "$d/mitmproxy-ca.pem"
  # stream_large_bodies: without it mitmproxy holds each 256 MiB download in memory before passing it on
  mitmdump --listen-host 127.0.0.1 --listen-port $MITM_PORT --set confdir="$d" \
    --set ssl_verify_upstream_trusted_ca="$UP_CA" --set stream_large_bodies=1m >"$work/mitmproxy.log" 2>&1 &
  proxy_pid=$!; pids+=($proxy_pid); wait_port $MITM_PORT $proxy_pid mitmproxy
  proxy_addr=127.0.0.1:$MITM_PORT
}

start_sallyport() {
  local d=$work/sallyport; mkdir -p "$d/log"
  cat > "$d/policy.yaml" <<EOF
proxy:
  listen: 127.0.0.1:$SP_PORT
  admin: 127.0.0.1:$SP_ADMIN
  limits: {max_connections: 30000, max_tunnels: 30000, max_connections_per_client: 30000, max_tunnels_per_client: 30000}
  http2: true                        # the h2 scenario; clients without ALPN (the others) get HTTP/1.1
ca: {cert: $pki/sallyport/ca.pem, key: $pki/sallyport/ca.key}
audit: {path: $d/log/audit.jsonl}   # not beside the policy: the proxy watches the policy's folder
upstream:
  trust: [$UP_CA]
network:
  deny: default
  allow_private: ["127.0.0.1/32:$UP_PORT"]
rules:
  - name: bench
    hosts: ["*.bench.test"]
    ports: [$UP_PORT]
EOF
  local t0; t0=$(date +%s%N)
  # the user's command; SALLYPORT_JAVA_OPTS reaches its JVM
  "$root/bin/sallyport" proxy --config "$d/policy.yaml" >"$work/sallyport.log" 2>&1 &
  proxy_pid=$!; pids+=($proxy_pid)
  for _ in $(seq 1 1500); do
    kill -0 $proxy_pid 2>/dev/null || die "sallyport exited during start (see $work/sallyport.log)"
    curl -fs -o /dev/null "http://127.0.0.1:$SP_ADMIN/readyz" && break
    sleep 0.02
  done
  curl -fs -o /dev/null "http://127.0.0.1:$SP_ADMIN/readyz" || die "sallyport /readyz not answering within 30 s"
  ready_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  echo "sallyport start to /readyz: $ready_ms ms" | tee -a "$work/notes.txt"
  proxy_addr=127.0.0.1:$SP_PORT
}

stop_proxy() {
  kill "$proxy_pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$proxy_pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$proxy_pid" 2>/dev/null || true
  wait "$proxy_pid" 2>/dev/null || true
  local kept=() pid
  for pid in "${pids[@]}"; do [ "$pid" = "$proxy_pid" ] || kept+=("$pid"); done
  pids=("${kept[@]}")
}

# ---------- load ----------
loadgen() {
  timeout $((DURATION + WARMUP + 120)) "$JAVA" --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC -Xms256m \
    -Xmx1g -Dio.netty.leakDetection.level=disabled -cp "$jar" dev.sallyport.benchmarks.peers.LoadGen "$@"
}

scenario_args() { # SCENARIO -> loadgen arguments
  local base="https://www.bench.test:$UP_PORT"
  case $1 in
    keepalive) echo "--url $base/small --connections 32 --warmup $WARMUP --duration $DURATION" ;;
    handshake) echo "--url $base/small --connections 16 --new-connection --warmup $WARMUP --duration $DURATION" ;;
    hosts) echo "--url $base/small --connections 16 --new-connection --hosts h%04d.bench.test --host-count $HOSTS --requests $HOSTS --duration $((DURATION * 6))" ;;
    body1m) echo "--url $base/1m --connections 8 --warmup $WARMUP --duration $DURATION" ;;
    download) echo "--url $base/large --connections 1 --warmup $WARMUP --duration $DURATION" ;;
    h2) echo "--url $base/small --connections 32 --h2-streams 8 --warmup $WARMUP --duration $DURATION" ;;
  esac
}

results=$work/results.txt; : > "$results"
echo "work folder: $work"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), $(uname -r)" | tee -a "$work/notes.txt"
echo "versions: $(nginx -v 2>&1 | sed 's/.*: //'), squid $(squid -v | sed -n 's/.*Version \([^ ]*\).*/\1/p'), mitmproxy $(mitmdump --version 2>/dev/null | sed -n 's/^Mitmproxy: //p'), $("$JAVA" -version 2>&1 | head -1)" | tee -a "$work/notes.txt"

# All proxies run side by side (an idle proxy costs nothing), and each scenario runs on every target back to
# back, so the figures compared in one row group are taken within a minute of each other.
declare -A tpid taddr
for target in $TARGETS; do
  proxy_pid=0; proxy_addr=
  case $target in
    direct) ;;
    squid) start_squid ;;
    mitmproxy) start_mitmproxy ;;
    sallyport) start_sallyport ;;
    *) die "BENCH_TARGETS: unknown target $target (expected: direct squid mitmproxy sallyport)" ;;
  esac
  tpid[$target]=$proxy_pid; taddr[$target]=$proxy_addr
  if [ "$target" != direct ]; then
    # a proxy is a long-running process: warm it up (JIT, first mint, pools) before measuring, with a host name
    # the minting scenario does not use
    echo "== $target warm-up" >&2
    loadgen --url "https://www.bench.test:$UP_PORT/small" --proxy "$proxy_addr" --connections 16 --warmup 0 \
      --duration $((PROXY_WARMUP / 2)) >/dev/null 2>>"$work/loadgen.log" || true
    loadgen --url "https://www.bench.test:$UP_PORT/small" --proxy "$proxy_addr" --connections 8 --new-connection \
      --warmup 0 --duration $((PROXY_WARMUP / 2)) >/dev/null 2>>"$work/loadgen.log" || true
    if [ "$target" = sallyport ] && [[ " $SCENARIOS " == *" h2 "* ]]; then
      # the HTTP/2 paths (both legs) get the same warm-up as the HTTP/1.1 ones: a cold path would be measured
      # with the JIT compiler's CPU in it
      loadgen --url "https://www.bench.test:$UP_PORT/small" --proxy "$proxy_addr" --connections 16 \
        --h2-streams 8 --warmup 0 --duration $((PROXY_WARMUP / 2)) >/dev/null 2>>"$work/loadgen.log" || true
    fi
    # and new host names (minting, new upstream connections), none of which the minting scenario uses
    if [ "$WARM_HOSTS" -gt 0 ]; then
      loadgen --url "https://www.bench.test:$UP_PORT/small" --proxy "$proxy_addr" --connections 8 --new-connection \
        --hosts w%04d.bench.test --host-count "$WARM_HOSTS" --requests "$WARM_HOSTS" --warmup 0 \
        --duration "$PROXY_WARMUP" >/dev/null 2>>"$work/loadgen.log" || true
    fi
  fi
done

for scenario in $SCENARIOS; do
  # shellcheck disable=SC2046
  base_args=($(scenario_args "$scenario"))
  [ ${#base_args[@]} -gt 0 ] || die "BENCH_SCENARIOS: unknown scenario $scenario"
  for target in $TARGETS; do
    if [ "$scenario" = h2 ] && [ "$target" != direct ] && [ "$target" != sallyport ]; then
      continue    # HTTP/2 to the client: measured directly and through Sallyport only
    fi
    args=("${base_args[@]}")
    if [ "$target" = direct ]; then
      args+=(--connect-to "127.0.0.1:$UP_PORT")
    else
      args+=(--proxy "${taddr[$target]}" --watch-pid "${tpid[$target]}")
    fi
    echo "== $target $scenario (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    line=$(loadgen "${args[@]}" 2>>"$work/loadgen.log" | grep '^result ' || true)
    [ -n "$line" ] || line="result rps=0 mibps=0 p50_ms=0 p99_ms=0 requests=0 errors=-1 seconds=0 cpu_ms_per_req=0 hwm_mib=0"
    echo "$target $scenario $line load=$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$results" >&2
    if [ "$target" = direct ] && [ "$scenario" = keepalive ]; then
      # wrk's own CPU time from the shell's 'times' (children user and system), to compare efficiency too
      out=$( (timeout $((DURATION + 30)) wrk -t1 -c32 -d"${DURATION}s" "https://www.bench.test:$UP_PORT/small" 2>&1; times) )
      w=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
      wcpu=$(tail -1 <<<"$out" | awk '{ for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } print t }')
      wreq=$(awk '/requests in/ {print $1}' <<<"$out")
      wus=$(awk -v c="${wcpu:-0}" -v n="${wreq:-0}" 'BEGIN { if (n > 0) printf "%.1f", c * 1e6 / n; else print "?" }')
      echo "wrk (1 thread, 32 connections, same URL): ${w:-failed} req/s, ${wus} us CPU/req; loadgen: $(sed -n 's/.*rps=\([^ ]*\).*/\1/p' <<<"$line") req/s, $(sed -n 's/.*client_cpu_us_per_req=\([^ ]*\).*/\1/p' <<<"$line") us CPU/req" \
        | tee -a "$work/notes.txt"
    fi
  done
done

if [ -n "${tpid[sallyport]:-}" ] && [ "$IDLE_TUNNELS" -gt 0 ]; then
  # on a fresh process, so the figure is the tunnels' cost and not the peak of the scenarios above
  proxy_pid=${tpid[sallyport]}
  stop_proxy
  start_sallyport
  loadgen --url "https://www.bench.test:$UP_PORT/small" --proxy "$proxy_addr" --connections 16 --warmup 0 \
    --duration "$WARMUP" >/dev/null 2>>"$work/loadgen.log" || true
  base=$(awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$proxy_pid/status")
  echo "sallyport RSS before the idle tunnels (fresh process, after $WARMUP s of keep-alive load): $base MiB" \
    | tee -a "$work/notes.txt"
  echo "== sallyport $IDLE_TUNNELS idle tunnels" >&2
  line=$(loadgen --url "https://www.bench.test:$UP_PORT/small" --proxy "$proxy_addr" --watch-pid "$proxy_pid" \
    --idle-tunnels "$IDLE_TUNNELS" --duration 5 2>>"$work/loadgen.log" | grep '^result ' || true)
  echo "sallyport with $IDLE_TUNNELS idle intercepted tunnels (one request each, then idle): ${line#result }" \
    | tee -a "$work/notes.txt"
fi

echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$work/notes.txt"
python3 "$root/benchmarks/peers/table.py" "$results" | tee "$work/table.txt"
echo
cat "$work/notes.txt"
