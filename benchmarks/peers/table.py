#!/usr/bin/env python3
"""Prints the peer comparison table from run.sh's results file: one row per scenario and target, each figure
with its ratio to the direct connection and to Sallyport."""
import sys

ORDER = ["keepalive", "h2", "handshake", "hosts", "body1m", "download"]
TITLES = {"keepalive": "small, keep-alive", "handshake": "new conn + TLS/req", "hosts": "1,000 new hosts",
          "body1m": "1 MiB bodies", "download": "256 MiB download", "h2": "small, HTTP/2 x8"}


def load(path):
    rows = {}
    for line in open(path):
        parts = line.split()
        if len(parts) < 3:
            continue
        target, scenario = parts[0], parts[1]
        fields = dict(p.split("=", 1) for p in parts[3:] if "=" in p)
        rows[(scenario, target)] = {k: float(v) for k, v in fields.items()}
    return rows


def ratio(value, base):
    if base is None or not base or value is None:
        return "-"
    return f"{value / base:.2f}"


def main():
    rows = load(sys.argv[1])
    targets = []
    for (_, t) in rows:
        if t not in targets:
            targets.append(t)
    metrics = [("req/s", "rps", "{:.0f}", True), ("MiB/s", "mibps", "{:.1f}", True),
               ("p50 ms", "p50_ms", "{:.2f}", True), ("p99 ms", "p99_ms", "{:.2f}", True),
               ("CPU ms/req", "cpu_ms_per_req", "{:.3f}", False), ("peak RSS MiB", "hwm_mib", "{:.0f}", False)]
    head = f"{'scenario':<20} {'target':<10}"
    for title, _, _, with_direct in metrics:
        head += f" {title:>12}" + (" {:>6}".format("/dir") if with_direct else "") + " {:>6}".format("/sp")
    head += f" {'errors':>6} {'load':>5}"
    print(head)
    print("-" * len(head))
    for scenario in ORDER + sorted({s for s, _ in rows} - set(ORDER)):
        for target in targets:
            r = rows.get((scenario, target))
            if r is None:
                continue
            d = rows.get((scenario, "direct"))
            sp = rows.get((scenario, "sallyport"))
            line = f"{TITLES.get(scenario, scenario):<20} {target:<10}"
            for _, key, fmt, with_direct in metrics:
                v = r.get(key)
                proxied = target != "direct"
                if key in ("cpu_ms_per_req", "hwm_mib") and not proxied:
                    line += f" {'-':>12}" + (f" {'-':>6}" if with_direct else "") + f" {'-':>6}"
                    continue
                line += f" {fmt.format(v):>12}"
                if with_direct:
                    line += f" {ratio(v, d.get(key) if d else None):>6}"
                line += f" {ratio(v, sp.get(key) if sp else None):>6}"
            line += f" {r.get('errors', 0):>6.0f} {r.get('load', 0):>5.1f}"
            print(line)
        print()
    for target in targets:
        known, new = rows.get(("handshake", target)), rows.get(("hosts", target))
        if target != "direct" and known and new and known.get("cpu_ms_per_req") and new.get("cpu_ms_per_req"):
            extra = new["cpu_ms_per_req"] - known["cpu_ms_per_req"]
            jit = ""
            if new.get("jit_ms_per_req"):
                jit = (f"; of these, the JIT compiler's: {new['jit_ms_per_req']:.2f} vs "
                       f"{known.get('jit_ms_per_req', 0):.2f} ms")
            print(f"{target}: a new host costs {extra:+.2f} ms of proxy CPU over a known one "
                  f"({new['cpu_ms_per_req']:.2f} vs {known['cpu_ms_per_req']:.2f} ms per new connection{jit})")


if __name__ == "__main__":
    main()
