package dev.sallyport.sandbox.vm;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The check run inside the sandbox before the workload: does the guest have a network interface, and does a TCP
 * connection to the proxy open? It guards against a known failure class (the runtime skipping nerdctl's CNI hooks
 * and leaving the guest with only {@code lo}), and against a proxy that is not listening where the guest looks.
 *
 * <p>The script is plain POSIX sh; it tries whatever the image has (bash's {@code /dev/tcp}, nc, python3, curl)
 * and prints marker lines that {@link #parse(String, String)} reads. It also looks in {@code /proc/net/route} for the
 * route to the synthetic prefix that the runner adds to the network's IPAM ({@link #routeWarning}): without it
 * transparent capture cannot work in the guest (a runtime that does not copy the namespace's routes into the VM).
 */
public final class GuestProbe {

    static final String MARK = "sallyport-probe ";

    private GuestProbe() {
    }

    /** The shell script for {@code sh -c}. */
    public static String script(String gateway, int port) {
        return """
                gw=%s; port=%d
                ifs=''
                for d in /sys/class/net/*; do n="${d##*/}"; [ "$n" = lo ] || [ ! -e "$d" ] || ifs="$ifs $n"; done
                echo "%sinterfaces:${ifs:- none}"
                [ -n "$ifs" ] || exit 0
                route=unknown
                if [ -r /proc/net/route ]; then route=missing
                  while read -r i d g f r u m k rest; do
                    case "$d/$k" in 000012C6/0000FEFF|C6120000/FFFE0000) route=ok;; esac
                  done < /proc/net/route
                fi
                echo "%sroute: $route"
                t=''; command -v timeout >/dev/null 2>&1 && t='timeout 10'
                tool=none; result=untested
                if command -v bash >/dev/null 2>&1; then tool=bash
                  if $t bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$gw" "$port" 2>/dev/null; then result=ok; else result=failed; fi
                elif command -v nc >/dev/null 2>&1; then tool=nc
                  if $t nc -z -w 5 "$gw" "$port" 2>/dev/null; then result=ok; else result=failed; fi
                elif command -v python3 >/dev/null 2>&1; then tool=python3
                  if $t python3 -c 'import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 5).close()' "$gw" "$port" 2>/dev/null; then result=ok; else result=failed; fi
                elif command -v curl >/dev/null 2>&1; then tool=curl
                  if curl -s -o /dev/null --max-time 5 --proxy "http://$gw:$port" http://probe.sallyport.invalid/; then result=ok; else result=failed; fi
                fi
                echo "%sproxy: $result via $tool"
                """.formatted(gateway, port, MARK, MARK, MARK);
    }

    /** What the probe found. */
    public sealed interface Result {
        /** One line for the user. */
        String message();

        /** The guest has an interface and reached the proxy. */
        record Reached(List<String> interfaces, String tool) implements Result {
            @Override
            public String message() {
                return "guest interfaces " + interfaces + " reach the proxy (checked with " + tool + ")";
            }
        }

        /** The guest has only loopback. */
        record NoInterface() implements Result {
            @Override
            public String message() {
                return "probe: the guest has no network interface besides lo (expected: eth0 on the sandbox "
                        + "network; the runtime may have skipped nerdctl's CNI hooks, see 'sallyport doctor')";
            }
        }

        /** The guest has an interface but the TCP connection to the proxy failed. */
        record Unreachable(List<String> interfaces, String tool, String proxy) implements Result {
            @Override
            public String message() {
                return "probe: guest interfaces " + interfaces + " cannot open a TCP connection to the proxy at "
                        + proxy + " (checked with " + tool + "; expected: the proxy listening on the bridge gateway)";
            }
        }

        /** The guest has an interface but the image has no tool to test the connection with. */
        record Untested(List<String> interfaces) implements Result {
            @Override
            public String message() {
                return "probe: guest interfaces " + interfaces + " present, but the image has none of bash, nc, "
                        + "python3, curl to test the proxy connection with; continuing";
            }
        }

        /** The probe printed nothing usable (the container did not start, or the image has no /bin/sh). */
        record Failed(String detail) implements Result {
            @Override
            public String message() {
                return "probe: no result from the sandbox (expected: marker lines from /bin/sh in the image): "
                        + detail;
            }
        }
    }

    /**
     * A warning when the probe found no route to the synthetic prefix {@code 198.18.0.0/15} in the guest (nothing when
     * it found one, or could not read the routing table).
     */
    public static Optional<String> routeWarning(String output) {
        return output.lines().anyMatch(line -> line.equals(MARK + "route: missing"))
                ? Optional.of("probe: the guest has no route to 198.18.0.0/15 (expected: the route the runner added to "
                        + "the network's IPAM, which the runtime copies into the guest): clients that ignore the proxy "
                        + "variables will fail with 'network unreachable'; those that use them still work")
                : Optional.empty();
    }

    /** Reads the marker lines printed by {@link #script}; {@code proxy} is only used in messages. */
    public static Result parse(String output, String proxy) {
        List<String> interfaces = null;
        String proxyLine = null;
        for (String line : output.lines().toList()) {
            if (line.startsWith(MARK + "interfaces:")) {
                String list = line.substring((MARK + "interfaces:").length()).strip();
                interfaces = list.equals("none") || list.isEmpty() ? List.of()
                        : Arrays.stream(list.split("\\s+")).toList();
            } else if (line.startsWith(MARK + "proxy: ")) {
                proxyLine = line.substring((MARK + "proxy: ").length()).strip();
            }
        }
        if (interfaces == null) {
            String first = output.strip().lines().findFirst().orElse("(no output)");
            return new Result.Failed(first);
        }
        if (interfaces.isEmpty()) {
            return new Result.NoInterface();
        }
        if (proxyLine == null) {
            return new Result.Failed("the proxy check did not finish");
        }
        String[] parts = proxyLine.split(" via ", 2);
        String tool = parts.length == 2 ? parts[1] : "?";
        return switch (parts[0]) {
            case "ok" -> new Result.Reached(interfaces, tool);
            case "untested" -> new Result.Untested(interfaces);
            default -> new Result.Unreachable(interfaces, tool, proxy);
        };
    }
}
