# Sourced by the attach benchmarks: start_shared_proxy LISTEN_PORT ADMIN_PORT starts a `sallyport proxy` on loopback
# with an empty policy, an admin token in "$work/admin-token" and its audit log in "$work", sets proxy_pid and
# waits for /readyz. Needs $sp (the sallyport command) and $work (the benchmark's folder).
start_shared_proxy() {
  umask 077
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/admin-token"
  cat > "$work/policy.yaml" <<POLICY
proxy:
  listen: 127.0.0.1:$1
  admin: 127.0.0.1:$2
  admin_token: {file: $work/admin-token}
audit: {path: $work/audit.jsonl}
rules: []
POLICY
  "$sp" ca init >/dev/null 2>&1 || true
  "$sp" proxy --config "$work/policy.yaml" >"$work/proxy.log" 2>&1 &
  proxy_pid=$!
  for _ in $(seq 1 300); do
    curl -fsS "http://127.0.0.1:$2/readyz" >/dev/null 2>&1 && break
    sleep 0.1
  done
}
