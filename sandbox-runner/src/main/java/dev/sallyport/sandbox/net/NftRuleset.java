package dev.sallyport.sandbox.net;

import dev.sallyport.policy.LiteralAddresses;

/**
 * The host-side nftables table that confines one sandbox bridge.
 *
 * <p>Why on the host: Kata moves the guest's packets between the pod namespace's veth and the VM's tap with tc
 * redirects, so rules inside the pod namespace (or the guest, whose root the workload may hold) never see them.
 * Every packet the guest sends does cross the host's bridge, so the confinement keys on the bridge interface (guest
 * root can forge source addresses); the source chain below only narrows what the bridge may send to the guest's own
 * address, and records what else it tried.
 *
 * <ul>
 *   <li>forward: anything arriving from the bridge is rejected (ICMP admin-prohibited, so clients fail at once);
 *       anything routed toward the bridge is dropped. No other sandbox, host on the LAN or metadata endpoint is
 *       reachable, even with {@code ip_forward=1} (which Docker or another CNI network may have turned on).</li>
 *   <li>prerouting (transparent capture): DNS to the gateway (UDP and TCP port 53) is DNATed to the proxy's DNS stub
 *       on the gateway, TCP to a synthetic address ({@code 198.18.0.0/15}, handed out by that stub) to the proxy's
 *       transparent listener, which reads the original destination from connection tracking (attached to a shared
 *       proxy, the same ports are the gateway relay's, which reads it the same way and carries it to the proxy in
 *       the sandbox's PROXY v2 header). Nothing else is
 *       translated: every other destination meets the filter chains below unchanged; with the policy's
 *       {@code network.literal_addresses: capture}, TCP to any address but the gateway's goes to that listener too,
 *       decided there as an IP-literal CONNECT. Without capture ({@code sallyport run --no-capture}) there is no
 *       such chain: nothing is translated.</li>
 *   <li>input: IPv6 from the bridge is dropped; TCP to the gateway address on the proxy's three ports (explicit,
 *       transparent, DNS) and UDP to its DNS port are accepted (without capture only the explicit port); other
 *       TCP gets a reset and everything else ICMP
 *       admin-prohibited (no other DNS, DHCP, SSH, the admin listener, host services).</li>
 *   <li>input to the gateway address from any interface but the bridge and loopback is dropped: Linux accepts a
 *       packet for any local address on any interface, so without this a host on the LAN (or another sandbox)
 *       could use the sandbox's proxy as its egress relay.</li>
 *   <li>source (before everything else, priority {@value #SOURCE_PRIORITY}): a packet from the bridge whose source is not
 *       the guest's own address (the runner fixes it, {@code nerdctl run --ip}) is dropped and counted, and its source
 *       goes into the set {@value #SPOOFED} (bounded; when full the packet is still dropped and counted), which the
 *       run's watch reads to report the attempt; a packet with the guest's source arriving on any other interface
 *       (loopback included) is dropped: only the guest speaks as the guest, so a relay on the gateway may take the
 *       peer's address as the sandbox's.</li>
 * </ul>
 * The base chains run at priority -100, before the filter chains of Docker, CNI and iptables-nft (0); a drop or
 * reject in any base chain is final, and our own table cannot be flushed by their tools.
 */
public final class NftRuleset {

    /** Hook priority of our base chains: ahead of the usual filter chains at 0. */
    public static final int PRIORITY = -100;
    /** The DNS stub's synthetic addresses (the proxy's {@code SyntheticAddresses.PREFIX4}). */
    static final String SYNTHETIC = "198.18.0.0/15";
    /** Hook priority of the source check: before connection tracking (-200), so a spoofed flood leaves no entries. */
    public static final int SOURCE_PRIORITY = -300;
    /** The set of source addresses the bridge sent that were not the guest's. */
    public static final String SPOOFED = "spoofed";
    /** At most this many spoofed sources are kept (each is reported once); the rest are still dropped and counted. */
    static final int SPOOFED_SIZE = 256;

    private NftRuleset() {
    }

    /**
     * Renders an {@code nft -f} script that (re)creates {@code table inet <table>} atomically: the leading
     * add-then-delete makes a rerun replace the table instead of failing or duplicating rules.
     */
    public static String render(String table, String bridge, String gateway, String guest, int proxyPort,
                                int transparentPort, int dnsPort) {
        return render(table, bridge, gateway, guest, proxyPort, transparentPort, dnsPort, LiteralAddresses.NO_ROUTE);
    }

    /**
     * The same; with {@link LiteralAddresses#CAPTURE} TCP to every address but the gateway's is DNATed to the
     * transparent listener, not only TCP to a synthetic address.
     */
    public static String render(String table, String bridge, String gateway, String guest, int proxyPort,
                                int transparentPort, int dnsPort, LiteralAddresses literals) {
        return render(table, bridge, gateway, guest, proxyPort, transparentPort, dnsPort, literals, true);
    }

    /**
     * The same; without {@code capture} ({@code sallyport run --no-capture}) there is no prerouting (nat) chain, so
     * nothing is translated, and the bridge may reach only the proxy port on the gateway: its DNS and transparent
     * ports are refused like any other.
     */
    public static String render(String table, String bridge, String gateway, String guest, int proxyPort,
                                int transparentPort, int dnsPort, LiteralAddresses literals, boolean capture) {
        requireName("table", table);
        requireName("bridge", bridge);
        Ipv4Subnet.parseAddress(gateway);
        Ipv4Subnet.parseAddress(guest);
        for (int port : new int[] {proxyPort, transparentPort, dnsPort}) {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port: " + port + " (expected: 1..65535)");
            }
        }
        return """
                table inet %1$s {}
                delete table inet %1$s
                table inet %1$s {
                \tset %9$s {
                \t\ttype ipv4_addr
                \t\tsize %10$d
                \t\tflags dynamic
                \t}
                \tchain source {
                \t\ttype filter hook prerouting priority %11$d; policy accept;
                \t\tiifname "%2$s" ip saddr != %8$s add @%9$s { ip saddr }
                \t\tiifname "%2$s" ip saddr != %8$s counter drop
                \t\tiifname != "%2$s" ip saddr %8$s drop
                \t}
                %12$s\tchain forward {
                \t\ttype filter hook forward priority %5$d; policy accept;
                \t\tiifname "%2$s" reject with icmpx type admin-prohibited
                \t\toifname "%2$s" drop
                \t}
                \tchain input {
                \t\ttype filter hook input priority %5$d; policy accept;
                \t\tiifname "%2$s" jump from_sandbox
                \t\tip daddr %3$s iifname != "lo" drop
                \t}
                \tchain from_sandbox {
                \t\tmeta nfproto ipv6 drop
                %13$s\t\tmeta l4proto tcp reject with tcp reset
                \t\treject with icmpx type admin-prohibited
                \t}
                }
                """.formatted(table, bridge, gateway, proxyPort, PRIORITY, transparentPort, dnsPort, guest, SPOOFED,
                SPOOFED_SIZE, SOURCE_PRIORITY, capture ? captureChain(bridge, gateway, transparentPort, dnsPort, literals)
                : "", accepted(gateway, proxyPort, transparentPort, dnsPort, capture));
    }

    /** What the bridge may reach on the gateway: the proxy's three ports (UDP for DNS), or only the explicit one. */
    private static String accepted(String gateway, int proxyPort, int transparentPort, int dnsPort, boolean capture) {
        if (!capture) {
            return "\t\tip daddr %s tcp dport %d accept\n".formatted(gateway, proxyPort);
        }
        return "\t\tip daddr %1$s tcp dport { %2$d, %3$d, %4$d } accept\n\t\tip daddr %1$s udp dport %4$d accept\n"
                .formatted(gateway, proxyPort, transparentPort, dnsPort);
    }

    /** Transparent capture's DNAT: the guest's DNS to the gateway to the stub, its captured TCP to the listener. */
    private static String captureChain(String bridge, String gateway, int transparentPort, int dnsPort,
                                       LiteralAddresses literals) {
        return """
                \tchain prerouting {
                \t\ttype nat hook prerouting priority %4$d; policy accept;
                \t\tiifname "%1$s" ip daddr %2$s meta l4proto { tcp, udp } th dport 53 dnat ip to %2$s:%6$d
                \t\tiifname "%1$s" ip daddr %3$s meta l4proto tcp dnat ip to %2$s:%5$d
                \t}
                """.formatted(bridge, gateway, literals == LiteralAddresses.CAPTURE ? "!= " + gateway : SYNTHETIC,
                PRIORITY, transparentPort, dnsPort);
    }

    private static void requireName(String what, String name) {
        if (!name.matches("[A-Za-z0-9_.-]{1,64}")) {
            throw new IllegalArgumentException(what + ": '" + name + "' (expected: letters, digits, '_', '.', '-')");
        }
    }
}
