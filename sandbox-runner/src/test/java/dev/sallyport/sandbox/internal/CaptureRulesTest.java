package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.policy.LiteralAddresses;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The sandbox network namespace's capture rules, loaded for real as the launcher loads them (in a user and network
 * namespace of the test's own: no host privilege, so this passes as root and as a normal user), with a listener on
 * the inside port that reads each connection's original destination as the host's relay does: which destinations
 * reach it, and which have no route, by {@code network.literal_addresses} and by the families captured.
 */
class CaptureRulesTest {
    private static final int INSIDE_PORT = 3128;
    /** Listens on 127.0.0.1 and [::1] at the inside port, then connects to each target and prints what arrived. */
    private static final String PROBE = """
            import socket, struct, sys, threading
            def original(c):
                if c.family == socket.AF_INET:
                    port, ip = struct.unpack("!2xH4s8x", c.getsockopt(socket.SOL_IP, 80, 16))
                    return socket.inet_ntoa(ip) + ":" + str(port)
                d = c.getsockopt(41, 80, 28)
                return socket.inet_ntop(socket.AF_INET6, d[8:24]) + ":" + str(struct.unpack("!H", d[2:4])[0])
            arrived = []
            def serve(s):
                while True:
                    c, _ = s.accept(); arrived.append(original(c)); c.close()   # before the client's recv returns
            four = socket.socket(); four.bind(("127.0.0.1", %1$d)); four.listen(8)
            threading.Thread(target=serve, args=(four,), daemon=True).start()
            try:
                six = socket.socket(socket.AF_INET6); six.bind(("::1", %1$d)); six.listen(8)
                threading.Thread(target=serve, args=(six,), daemon=True).start()
            except OSError:
                pass
            for host in sys.argv[1:]:
                c = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET); c.settimeout(3)
                try:
                    c.connect((host, 443)); c.recv(1); print("captured", host)
                except OSError as e:
                    print("failed", host, e.errno)
            """.formatted(INSIDE_PORT);
    private static final List<String> TARGETS = List.of("198.18.0.9", "203.0.113.5", "10.1.2.3",
            "fd5a:11b0:7f00:53::9", "2001:db8::5", "::ffff:192.0.2.1");

    private CaptureRules.Tools tools;

    @BeforeEach
    void requirements() {
        tools = CaptureRules.tools().orElse(null);
        Prerequisites.require("ip and nft", tools != null, "iproute2 and nftables (scripts/install-deps.sh)");
        Prerequisites.require("python3", Files.isExecutable(Path.of("/usr/bin/python3")), "the in-namespace probe");
        Prerequisites.require("user namespaces with capture", Launcher.captureLayer(List.of(), tools),
                "user namespaces in which the runner keeps its capabilities, nf_tables with NAT");
    }

    @Test
    void byDefaultOnlySyntheticAddressesAreCapturedAndLiteralsHaveNoRoute() {
        String out = probe(LiteralAddresses.NO_ROUTE, CaptureRules.Families.IPV4_AND_IPV6);
        assertThat(out).contains("captured 198.18.0.9", "captured fd5a:11b0:7f00:53::9")
                .contains("failed 203.0.113.5 101", "failed 10.1.2.3 101", "failed 2001:db8::5 101",
                        "failed ::ffff:192.0.2.1 101");
    }

    @Test
    void capturingLiteralAddressesRedirectsTcpToEveryAddressIpv4AndIpv6() {
        String out = probe(LiteralAddresses.CAPTURE, CaptureRules.Families.IPV4_AND_IPV6);
        assertThat(out).doesNotContain("failed");
        assertThat(out).contains("arrived 198.18.0.9:443", "arrived 203.0.113.5:443", "arrived 10.1.2.3:443",
                "arrived fd5a:11b0:7f00:53::9:443", "arrived 2001:db8::5:443", "arrived 192.0.2.1:443");
    }

    @Test
    void ipv4OnlyCaptureLeavesIpv6WithoutARoute() {
        String out = probe(LiteralAddresses.CAPTURE, CaptureRules.Families.IPV4);
        assertThat(out).contains("captured 203.0.113.5", "captured 198.18.0.9")
                .containsPattern("failed fd5a:11b0:7f00:53::9 (101|99)").containsPattern("failed 2001:db8::5 (101|99)");
    }

    @Test
    void thisHostCapturesIpv6WhereItHasIpv6AndSaysSoOtherwise() {
        boolean hostIpv6 = Files.isDirectory(Path.of("/proc/sys/net/ipv6"));
        assertThat(Launcher.families(List.of(), tools)).isEqualTo(hostIpv6 ? CaptureRules.Families.IPV4_AND_IPV6
                : CaptureRules.Families.IPV4);
        assertThat(CaptureRules.ipv4OnlyNotice(CaptureRules.Families.IPV4_AND_IPV6)).isEmpty();
        assertThat(CaptureRules.ipv4OnlyNotice(CaptureRules.Families.IPV4)).isEqualTo(hostIpv6
                ? java.util.Optional.of("transparent capture is IPv4 only (expected: an IPv6 address on the sandbox "
                        + "network namespace's loopback, which this host refuses); AAAA questions get an empty answer")
                : java.util.Optional.empty());
    }

    /** The launcher's loopback and rules in a fresh user and network namespace, then {@link #PROBE}. */
    private String probe(LiteralAddresses literals, CaptureRules.Families families) {
        String script = CaptureRules.loopback("\"$1\"", literals, families) + " && \"$2\" \"$3\" && shift 3"
                + " && exec python3 -c \"$@\"";
        List<String> argv = new java.util.ArrayList<>(List.of("unshare", "--user", "--map-root-user", "--net",
                "sh", "-c", script, "capture-test", tools.ip().toString(), tools.nft().toString(),
                CaptureRules.rules(INSIDE_PORT, literals, families),
                PROBE + "for a in arrived: print('arrived', a)\n"));
        argv.addAll(TARGETS);
        ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(60), argv, null);
        assertThat(r.exit()).as(r.stderr()).isZero();
        return r.stdout();
    }
}
