package dev.sallyport.sandbox.internal;

import dev.sallyport.policy.LiteralAddresses;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Transparent capture in the process sandbox's own network namespace: the synthetic prefixes of the proxy's DNS
 * stub (IPv4, and IPv6 where the host has it) put on the loopback (so a connect to it is routed), and nftables rules that redirect every TCP connection to
 * it, and to port 53 of the loopback (DNS over TCP), to the sandbox's one listener, where the host's
 * {@link ProxyRelay} reads the original destination; and DNS over UDP to port 53 of the loopback to the sandbox's UDP
 * socket on the same port, which the host's {@link DnsDatagramRelay} reads. Other UDP, ICMP and every other address
 * stay where they were: nowhere (the namespace has only its loopback). With {@link LiteralAddresses#CAPTURE} (the
 * policy's {@code network.literal_addresses}), TCP to every address but the loopback's is redirected too, behind a
 * default route through the loopback (without a route a connect fails before any rule sees it).
 */
public final class CaptureRules {
    /** The synthetic IPv4 prefix with one address of it, as {@code ip addr add} takes it. */
    static final String LOOPBACK_PREFIX = "198.18.0.1/15";
    /** The synthetic IPv6 prefix (the proxy's {@code SyntheticAddresses.PREFIX6}) with one address of it. */
    static final String LOOPBACK_PREFIX6 = "fd5a:11b0:7f00:53::1/96";
    static final String PREFIX6 = "fd5a:11b0:7f00:53::/96";
    /** False on a host booted with {@code ipv6.disable=1}: then capture is IPv4 only, and nothing is probed. */
    private static final boolean HOST_IPV6 = Files.isDirectory(Path.of("/proc/sys/net/ipv6"));
    private static final List<Path> SBIN = List.of(Path.of("/usr/sbin"), Path.of("/sbin"), Path.of("/usr/bin"),
            Path.of("/bin"));

    /** The host's {@code ip} and {@code nft}. */
    public record Tools(Path ip, Path nft) {}

    /**
     * What a sandbox's capture covers: IPv4 alone (a host without IPv6, or one whose network namespaces refuse an
     * IPv6 address) or IPv4 and IPv6.
     */
    public enum Families {
        IPV4, IPV4_AND_IPV6;

        /** What to try on this host: both, unless it has no IPv6 at all. */
        static Families wanted() {
            return HOST_IPV6 ? IPV4_AND_IPV6 : IPV4;
        }
    }

    private CaptureRules() {
    }

    /** Where {@code ip} and {@code nft} are, when both are installed. */
    public static Optional<Tools> tools() {
        Optional<Path> ip = find("ip");
        Optional<Path> nft = find("nft");
        return ip.isPresent() && nft.isPresent() ? Optional.of(new Tools(ip.get(), nft.get())) : Optional.empty();
    }

    private static Optional<Path> find(String name) {
        return SBIN.stream().map(d -> d.resolve(name)).filter(Files::isExecutable).findFirst();
    }

    /**
     * Whether capture covers IPv6 here (the proxy then answers AAAA questions with synthetic addresses): the host has
     * IPv6 and a network namespace of the runner's accepts an IPv6 address (probed once, {@link Launcher#families}).
     */
    public static boolean ipv6() {
        return tools().map(t -> Launcher.families(List.of(), t)).orElse(Families.IPV4) == Families.IPV4_AND_IPV6;
    }

    /**
     * The one line a run says when this host has IPv6 but {@code families} is IPv4 only (the sandbox's network
     * namespace refused the IPv6 prefix); empty otherwise.
     */
    public static Optional<String> ipv4OnlyNotice(Families families) {
        return HOST_IPV6 && families == Families.IPV4 ? Optional.of("transparent capture is IPv4 only (expected: an "
                + "IPv6 address on the sandbox network namespace's loopback, which this host refuses); AAAA questions "
                + "get an empty answer") : Optional.empty();
    }

    /** The shell commands that bring the loopback up with the synthetic prefixes on it; {@code ip} as the shell names it. */
    static String loopback(String ip) {
        return loopback(ip, LiteralAddresses.NO_ROUTE, Families.wanted());
    }

    /**
     * The same for {@code families}, with a default route through the loopback for {@link LiteralAddresses#CAPTURE}
     * (without a route a connect fails before any rule sees it).
     */
    static String loopback(String ip, LiteralAddresses literals, Families families) {
        boolean six = families == Families.IPV4_AND_IPV6;
        String routes = literals == LiteralAddresses.CAPTURE
                ? " && " + ip + " route add default dev lo" + (six ? " && " + ip + " -6 route add default dev lo" : "")
                : "";
        return ip + " link set lo up && " + ip + " addr add " + LOOPBACK_PREFIX + " dev lo"
                + (six ? " && " + loopback6(ip) : "") + routes;
    }

    /** The shell command that puts the IPv6 prefix on the loopback. */
    static String loopback6(String ip) {
        return ip + " -6 addr add " + LOOPBACK_PREFIX6 + " dev lo";
    }

    /**
     * The nft commands (one argument) that redirect what is captured to {@code 127.0.0.1:insidePort} (and
     * {@code [::1]:insidePort} for the IPv6 prefix).
     */
    public static String rules(int insidePort) {
        return rules(insidePort, LiteralAddresses.NO_ROUTE, Families.wanted());
    }

    /**
     * The same for {@code families}; with {@link LiteralAddresses#CAPTURE}, TCP to any address but the loopback's is
     * redirected too.
     */
    public static String rules(int insidePort, LiteralAddresses literals, Families families) {
        return rules4(insidePort, literals) + (families == Families.IPV4_AND_IPV6
                ? "; " + rules6(insidePort, literals) : "");
    }

    /** The IPv6 part of {@link #rules}. */
    static String rules6(int insidePort, LiteralAddresses literals) {
        return "add table ip6 sallyport; "
                + "add chain ip6 sallyport output { type nat hook output priority -100; policy accept; }; "
                + "add rule ip6 sallyport output ip6 daddr " + (literals == LiteralAddresses.CAPTURE ? "!= ::1" : PREFIX6)
                + " meta l4proto tcp redirect to :" + insidePort;
    }

    /** The IPv4 part of {@link #rules}. */
    static String rules4(int insidePort, LiteralAddresses literals) {
        String captured = literals == LiteralAddresses.CAPTURE ? "!= 127.0.0.0/8" : "198.18.0.0/15";
        return "add table ip sallyport; "
                + "add chain ip sallyport output { type nat hook output priority -100; policy accept; }; "
                + "add rule ip sallyport output ip daddr " + captured + " meta l4proto tcp redirect to :" + insidePort
                + "; add rule ip sallyport output ip daddr 127.0.0.0/8 tcp dport 53 redirect to :" + insidePort
                + "; add rule ip sallyport output ip daddr 127.0.0.0/8 udp dport 53 redirect to :" + insidePort;
    }

    /** The sandbox's {@code /etc/resolv.conf}: the DNS stub on its loopback (UDP and TCP). */
    public static String resolvConf() {
        return "# sallyport sandbox: names are answered by the proxy's DNS stub (synthetic addresses for the names the\n"
                + "# policy can allow), over UDP or TCP, which the sandbox relays to it\n"
                + "nameserver 127.0.0.1\noptions timeout:2 attempts:3\n";
    }
}
