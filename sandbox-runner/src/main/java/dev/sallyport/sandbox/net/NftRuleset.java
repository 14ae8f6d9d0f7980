package dev.sallyport.sandbox.net;

/**
 * The host-side nftables table that confines one sandbox bridge.
 *
 * <p>Why on the host: Kata moves the guest's packets between the pod namespace's veth and the VM's tap with tc
 * redirects, so rules inside the pod namespace (or the guest, whose root the workload may hold) never see them.
 * Every packet the guest sends does cross the host's bridge, so the rules key on the bridge interface (never on
 * source addresses, which guest root can forge).
 *
 * <ul>
 *   <li>forward: anything arriving from the bridge is rejected (ICMP admin-prohibited, so clients fail at once);
 *       anything routed toward the bridge is dropped. No other sandbox, host on the LAN or metadata endpoint is
 *       reachable, even with {@code ip_forward=1} (which Docker or another CNI network may have turned on).</li>
 *   <li>input: IPv6 from the bridge is dropped; TCP to the gateway address on the proxy port is accepted; other
 *       TCP gets a reset and everything else ICMP admin-prohibited (no DNS, DHCP, SSH, host services).</li>
 *   <li>input to the gateway address from any interface but the bridge and loopback is dropped: Linux accepts a
 *       packet for any local address on any interface, so without this a host on the LAN (or another sandbox)
 *       could use the sandbox's proxy as its egress relay.</li>
 * </ul>
 * The base chains run at priority -100, before the filter chains of Docker, CNI and iptables-nft (0); a drop or
 * reject in any base chain is final, and our own table cannot be flushed by their tools.
 */
public final class NftRuleset {

    /** Hook priority of our base chains: ahead of the usual filter chains at 0. */
    public static final int PRIORITY = -100;

    private NftRuleset() {
    }

    /**
     * Renders an {@code nft -f} script that (re)creates {@code table inet <table>} atomically: the leading
     * add-then-delete makes a rerun replace the table instead of failing or duplicating rules.
     */
    public static String render(String table, String bridge, String gateway, int proxyPort) {
        requireName("table", table);
        requireName("bridge", bridge);
        Ipv4Subnet.parseAddress(gateway);
        if (proxyPort < 1 || proxyPort > 65535) {
            throw new IllegalArgumentException("proxyPort: " + proxyPort + " (expected: 1..65535)");
        }
        return """
                table inet %1$s {}
                delete table inet %1$s
                table inet %1$s {
                \tchain forward {
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
                \t\tip daddr %3$s tcp dport %4$d accept
                \t\tmeta l4proto tcp reject with tcp reset
                \t\treject with icmpx type admin-prohibited
                \t}
                }
                """.formatted(table, bridge, gateway, proxyPort, PRIORITY);
    }

    private static void requireName(String what, String name) {
        if (!name.matches("[A-Za-z0-9_.-]{1,64}")) {
            throw new IllegalArgumentException(what + ": '" + name + "' (expected: letters, digits, '_', '.', '-')");
        }
    }
}
