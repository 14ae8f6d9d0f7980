package dev.sallyport.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * The networks that {@code network.deny: default} stands for, and the IPv6 forms that embed an IPv4
 * address. {@link PolicyEngine#onDial} denies an IPv6 address whose embedded IPv4 address is denied.
 *
 * <p>What is denied: every block of the IANA IPv4 and IPv6 Special-Purpose Address Registries that the
 * registry marks not globally reachable (and a few that are reachable but are no place for an HTTP request:
 * anycast protocol services, identifiers, the 6to4 relay); the IPv6 space IANA has not allocated for unicast;
 * and every cloud metadata or host-agent address known to us that is not already inside one of those
 * (Azure's WireServer is a public address). {@link #ENTRIES} gives each with its reason; the policy
 * README's table is the same list and a test keeps the two equal.
 */
public final class DefaultDeny {

    /** One row of the default list: the networks as the docs write them, and why they are denied. */
    public record Entry(String text, List<Cidr> networks, String why) {
        public Entry {
            Objects.requireNonNull(text, "text");
            Objects.requireNonNull(why, "why");
            networks = List.copyOf(networks);
            if (networks.isEmpty()) {
                throw new IllegalArgumentException("entry '" + text + "': no networks (expected: at least one)");
            }
        }
    }

    /** IPv4-mapped {@code ::ffff:0:0/96}: how a dual-stack socket spells an IPv4 address. */
    static final Cidr MAPPED = Cidr.parse("::ffff:0:0/96");
    /** The NAT64 well-known prefix {@code 64:ff9b::/96} (RFC 6052): a translator dials the IPv4 address inside. */
    static final Cidr NAT64 = Cidr.parse("64:ff9b::/96");

    /** {@code network.deny: default}, row by row. */
    public static final List<Entry> ENTRIES = List.of(
            row("0.0.0.0/8", "\"this network\" (RFC 791); 0.0.0.0 reaches the local host on Linux"),
            row("10.0.0.0/8", "private use (RFC 1918)"),
            row("100.64.0.0/10", "shared address space, carrier-grade NAT (RFC 6598); Alibaba Cloud metadata"
                    + " 100.100.100.200 and its resolvers 100.100.2.136, 100.100.2.138"),
            row("127.0.0.0/8", "loopback (RFC 1122)"),
            row("169.254.0.0/16", "link-local (RFC 3927): the metadata service 169.254.169.254 of AWS, Google"
                    + " Cloud, Azure, Oracle Cloud, DigitalOcean, Hetzner, OpenStack, IBM Cloud and others; AWS"
                    + " ECS task metadata 169.254.170.2, EKS Pod Identity 169.254.170.23, the VPC resolver"
                    + " 169.254.169.253 and time service 169.254.169.123; Tencent Cloud metadata 169.254.0.23;"
                    + " Scaleway metadata 169.254.42.42; Kubernetes NodeLocal DNS 169.254.20.10"),
            row("172.16.0.0/12", "private use (RFC 1918)"),
            row("192.0.0.0/24", "IETF protocol assignments (RFC 6890): Oracle Cloud Classic metadata"
                    + " 192.0.0.192, DS-Lite 192.0.0.0/29, NAT64 discovery 192.0.0.170 and .171; also the PCP and"
                    + " TURN anycast addresses 192.0.0.9 and .10, which are reachable but no HTTP destination"),
            row("192.0.2.0/24", "documentation, TEST-NET-1 (RFC 5737)"),
            row("192.88.99.0/24", "6to4 relay anycast, deprecated (RFC 7526): a relay that unwraps traffic to"
                    + " whatever IPv4 address it carries"),
            row("192.168.0.0/16", "private use (RFC 1918)"),
            row("198.18.0.0/15", "benchmarking (RFC 2544)"),
            row("198.51.100.0/24", "documentation, TEST-NET-2 (RFC 5737)"),
            row("203.0.113.0/24", "documentation, TEST-NET-3 (RFC 5737)"),
            row("224.0.0.0/4", "multicast (RFC 5771)"),
            row("240.0.0.0/4", "reserved (RFC 1112), with the limited broadcast 255.255.255.255 (RFC 919)"),
            row("168.63.129.16/32", "Azure WireServer: a public address that Azure answers from the host"
                    + " (VM agent, DNS, DHCP, health probes); never an internet server"),
            new Entry("::/8 except ::ffff:0:0/96 and 64:ff9b::/96",
                    Cidr.parse("::/8").without(List.of(MAPPED, NAT64)),
                    "reserved by the IETF (RFC 4291): unspecified ::, loopback ::1, IPv4-compatible ::/96"
                            + " (deprecated), IPv4-translated ::ffff:0:0:0/96 (RFC 2765), local-use NAT64"
                            + " 64:ff9b:1::/48 (RFC 8215) and every unassigned address. The two exceptions carry"
                            + " an IPv4 address and are judged by it"),
            row("100::/8", "reserved; holds the discard-only 100::/64 (RFC 6666) and the dummy prefix"
                    + " 100:0:0:1::/64"),
            row("200::/7, 400::/6, 800::/5, 1000::/4", "not allocated by IANA (RFC 4291): nothing on the"
                    + " internet is there"),
            row("2001::/23", "IETF protocol assignments (RFC 2928): Teredo 2001::/32, benchmarking 2001:2::/48"
                    + " (RFC 5180), the ORCHID identifiers 2001:10::/28 (deprecated) and 2001:20::/28 (RFC 7343),"
                    + " DRIP entity tags 2001:30::/28 (RFC 9374), AMT 2001:3::/32, AS112 2001:4:112::/48, the PCP,"
                    + " TURN and DNS-SD anycast 2001:1::1 to ::3: identifiers and protocol services, no HTTP"
                    + " destination"),
            row("2001:db8::/32", "documentation (RFC 3849)"),
            row("3fff::/20", "documentation (RFC 9637)"),
            row("5f00::/16", "SRv6 segment identifiers (RFC 9602)"),
            row("4000::/3, 6000::/3, 8000::/3, a000::/3, c000::/3, e000::/4, f000::/5, f800::/6, fe00::/9",
                    "not allocated by IANA (RFC 4291): nothing on the internet is there"),
            row("fc00::/7", "unique local (RFC 4193): AWS metadata fd00:ec2::254, resolver fd00:ec2::253, time"
                    + " fd00:ec2::123 and EKS Pod Identity fd00:ec2::23; Google Cloud metadata fd20:ce::254"),
            row("fe80::/10", "link-local (RFC 4291): OpenStack metadata fe80::a9fe:a9fe"),
            row("fec0::/10", "site-local, deprecated (RFC 3879), still routed by some stacks"),
            row("ff00::/8", "multicast (RFC 4291)"));

    /** {@code network.deny: default}: the networks of {@link #ENTRIES}, in order. */
    public static final List<Cidr> NETWORKS = ENTRIES.stream().flatMap(e -> e.networks().stream()).toList();

    private DefaultDeny() {}

    private static Entry row(String text, String why) {
        return new Entry(text, Stream.of(text.split(", ")).map(Cidr::parse).toList(), why);
    }

    /**
     * The IPv4 addresses embedded in an IPv6 address. Empty for IPv4 and for other IPv6 addresses. Where a
     * prefix allows two readings both are returned, and the caller denies if either is denied: a legitimate
     * address may be refused, never a private one let through.
     *
     * <ul>
     *   <li>IPv4-mapped {@code ::ffff:0:0/96}, IPv4-compatible {@code ::/96} and IPv4-translated
     *       {@code ::ffff:0:0:0/96} (RFC 2765): the last 32 bits;</li>
     *   <li>NAT64 {@code 64:ff9b::/96} (the last 32 bits) and {@code 64:ff9b:1::/48} (the /96 and the
     *       RFC 6052 /48 positions);</li>
     *   <li>6to4 {@code 2002::/16}: bits 16..47;</li>
     *   <li>Teredo {@code 2001::/32}: the server (bits 32..63) and the client (the bitwise NOT of the last
     *       32 bits);</li>
     *   <li>ISATAP (RFC 5214), under any prefix: an interface identifier {@code 0:5efe:a.b.c.d} or
     *       {@code 200:5efe:a.b.c.d} (the u and g bits may be set); a host with an ISATAP interface sends
     *       such traffic to a.b.c.d in IPv4.</li>
     * </ul>
     */
    public static List<IpAddress> embeddedIpv4(IpAddress a) {
        if (a.isV4()) {
            return List.of();
        }
        List<IpAddress> out = new ArrayList<>(2);
        if (zeros(a, 0, 8) && (zeros(a, 8, 12) || (group(a, 4) == 0 && group(a, 5) == 0xffff)
                || (group(a, 4) == 0xffff && group(a, 5) == 0))) {
            out.add(v4(a, 12, 13, 14, 15, false)); // compatible, mapped or translated
        } else if (group(a, 0) == 0x64 && group(a, 1) == 0xff9b) {
            if (zeros(a, 4, 12)) {
                out.add(v4(a, 12, 13, 14, 15, false));
            } else if (group(a, 2) == 1) {
                out.add(v4(a, 12, 13, 14, 15, false));
                out.add(v4(a, 6, 7, 9, 10, false));
            }
        } else if (group(a, 0) == 0x2002) {
            out.add(v4(a, 2, 3, 4, 5, false));
        } else if (group(a, 0) == 0x2001 && group(a, 1) == 0) {
            out.add(v4(a, 4, 5, 6, 7, false));
            out.add(v4(a, 12, 13, 14, 15, true));
        }
        if ((a.byteAt(8) & 0xfc) == 0 && a.byteAt(9) == 0 && a.byteAt(10) == 0x5e && a.byteAt(11) == 0xfe) {
            IpAddress isatap = v4(a, 12, 13, 14, 15, false);
            if (!out.contains(isatap)) {
                out.add(isatap);
            }
        }
        return List.copyOf(out);
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
