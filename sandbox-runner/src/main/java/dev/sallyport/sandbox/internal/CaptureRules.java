package dev.sallyport.sandbox.internal;

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
 * stay where they were: nowhere (the namespace has only its loopback).
 */
public final class CaptureRules {
    /** The synthetic IPv4 prefix with one address of it, as {@code ip addr add} takes it. */
    static final String LOOPBACK_PREFIX = "198.18.0.1/15";
    /** The synthetic IPv6 prefix (the proxy's {@code SyntheticAddresses.PREFIX6}) with one address of it. */
    static final String LOOPBACK_PREFIX6 = "fd5a:11b0:7f00:53::1/96";
    static final String PREFIX6 = "fd5a:11b0:7f00:53::/96";
    /** False on a host booted with {@code ipv6.disable=1}: then capture is IPv4 only. */
    private static final boolean IPV6 = Files.isDirectory(Path.of("/proc/sys/net/ipv6"));
    private static final List<Path> SBIN = List.of(Path.of("/usr/sbin"), Path.of("/sbin"), Path.of("/usr/bin"),
            Path.of("/bin"));

    /** The host's {@code ip} and {@code nft}. */
    public record Tools(Path ip, Path nft) {}

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

    /** Whether capture covers IPv6 here (the proxy then answers AAAA questions with synthetic addresses). */
    public static boolean ipv6() {
        return IPV6;
    }

    /** The shell commands that bring the loopback up with the synthetic prefixes on it; {@code ip} as the shell names it. */
    static String loopback(String ip) {
        return ip + " link set lo up && " + ip + " addr add " + LOOPBACK_PREFIX + " dev lo"
                + (IPV6 ? " && " + ip + " -6 addr add " + LOOPBACK_PREFIX6 + " dev lo" : "");
    }

    /**
     * The nft commands (one argument) that redirect what is captured to {@code 127.0.0.1:insidePort} (and
     * {@code [::1]:insidePort} for the IPv6 prefix).
     */
    public static String rules(int insidePort) {
        return rules4(insidePort) + (IPV6 ? "; add table ip6 sallyport; "
                + "add chain ip6 sallyport output { type nat hook output priority -100; policy accept; }; "
                + "add rule ip6 sallyport output ip6 daddr " + PREFIX6 + " meta l4proto tcp redirect to :"
                + insidePort : "");
    }

    private static String rules4(int insidePort) {
        return "add table ip sallyport; "
                + "add chain ip sallyport output { type nat hook output priority -100; policy accept; }; "
                + "add rule ip sallyport output ip daddr 198.18.0.0/15 meta l4proto tcp redirect to :" + insidePort
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
