package dev.sallyport.sandbox.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Transparent capture in the process sandbox's own network namespace: the synthetic prefix of the proxy's DNS
 * stub put on the loopback (so a connect to it is routed), and nftables rules that redirect every TCP connection to
 * it, and to port 53 of the loopback (DNS over TCP), to the sandbox's one listener, where the host's
 * {@link ProxyRelay} reads the original destination; and DNS over UDP to port 53 of the loopback to the sandbox's UDP
 * socket on the same port, which the host's {@link DnsDatagramRelay} reads. Other UDP, ICMP and every other address
 * stay where they were: nowhere (the namespace has only its loopback).
 */
public final class CaptureRules {
    /** The synthetic IPv4 prefix with one address of it, as {@code ip addr add} takes it. */
    static final String LOOPBACK_PREFIX = "198.18.0.1/15";
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

    /** The nft commands (one argument) that redirect what is captured to {@code 127.0.0.1:insidePort}. */
    public static String rules(int insidePort) {
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
