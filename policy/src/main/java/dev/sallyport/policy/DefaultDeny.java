package dev.sallyport.policy;

import java.util.List;
import java.util.stream.Stream;

/**
 * The networks that {@code network.deny: default} stands for, and the IPv6 forms that embed an IPv4
 * address. {@link PolicyEngine#onDial} denies an IPv6 address whose embedded IPv4 address is denied.
 */
public final class DefaultDeny {

    /** {@code network.deny: default}. */
    public static final List<Cidr> NETWORKS = Stream.of(
            "0.0.0.0/8",          // "this network"; 0.0.0.0 reaches the local host on many systems
            "10.0.0.0/8",         // RFC 1918
            "100.64.0.0/10",      // CGNAT (includes 100.100.100.200, Alibaba metadata)
            "127.0.0.0/8",        // loopback
            "169.254.0.0/16",     // link-local (includes 169.254.169.254, cloud metadata)
            "172.16.0.0/12",      // RFC 1918
            "192.168.0.0/16",     // RFC 1918
            "224.0.0.0/4",        // multicast
            "240.0.0.0/4",        // reserved, includes 255.255.255.255
            "::/128",             // unspecified
            "::1/128",            // loopback
            "fc00::/7",           // unique local (includes fd00:ec2::254, AWS metadata)
            "fe80::/10",          // link-local
            "fec0::/10",          // site-local (deprecated, still routed by some stacks)
            "ff00::/8"            // multicast
    ).map(Cidr::parse).toList();

    private DefaultDeny() {}

    /**
     * The IPv4 addresses embedded in an IPv6 address: IPv4-mapped {@code ::ffff:0:0/96}, IPv4-compatible
     * {@code ::/96}, NAT64 {@code 64:ff9b::/96} and {@code 64:ff9b:1::/48} (both the /96 and the RFC 6052
     * /48 positions), 6to4 {@code 2002::/16}, Teredo {@code 2001::/32} (server, and client = the bitwise
     * NOT of the last 32 bits). Empty for IPv4 and for other IPv6 addresses. Where a prefix allows two
     * readings (64:ff9b:1::/48, Teredo) both are returned, and the caller denies if either is denied: a
     * legitimate local-use NAT64 address may be refused, never a private one let through.
     */
    public static List<IpAddress> embeddedIpv4(IpAddress a) {
        if (a.isV4()) {
            return List.of();
        }
        if (zeros(a, 0, 10) && ((a.byteAt(10) == 0xff && a.byteAt(11) == 0xff)
                || (a.byteAt(10) == 0 && a.byteAt(11) == 0))) {
            return List.of(v4(a, 12, 13, 14, 15, false)); // mapped or compatible
        }
        if (group(a, 0) == 0x64 && group(a, 1) == 0xff9b) {
            if (zeros(a, 4, 12)) {
                return List.of(v4(a, 12, 13, 14, 15, false));
            }
            if (group(a, 2) == 1) {
                return List.of(v4(a, 12, 13, 14, 15, false), v4(a, 6, 7, 9, 10, false));
            }
            return List.of();
        }
        if (group(a, 0) == 0x2002) {
            return List.of(v4(a, 2, 3, 4, 5, false));
        }
        if (group(a, 0) == 0x2001 && group(a, 1) == 0) {
            return List.of(v4(a, 4, 5, 6, 7, false), v4(a, 12, 13, 14, 15, true));
        }
        return List.of();
    }

    private static boolean zeros(IpAddress a, int from, int to) {
        for (int i = from; i < to; i++) {
            if (a.byteAt(i) != 0) {
                return false;
            }
        }
        return true;
    }

    private static int group(IpAddress a, int g) {
        return (a.byteAt(2 * g) << 8) | a.byteAt(2 * g + 1);
    }

    private static IpAddress v4(IpAddress a, int b0, int b1, int b2, int b3, boolean invert) {
        int x = invert ? 0xff : 0;
        return IpAddress.ofBytes(new byte[] {(byte) (a.byteAt(b0) ^ x), (byte) (a.byteAt(b1) ^ x),
                (byte) (a.byteAt(b2) ^ x), (byte) (a.byteAt(b3) ^ x)});
    }
}
