package dev.sallyport.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * An IPv4 or IPv6 network: {@code 10.0.0.0/8}, {@code fc00::/7}, or a bare address (a /32 or /128).
 * The base must have no bits set beyond the prefix ({@code 10.0.0.1/8} is refused), so one network has
 * one spelling.
 */
public record Cidr(IpAddress base, int prefix) {

    public Cidr {
        Objects.requireNonNull(base, "base");
        if (prefix < 0 || prefix > base.bitLength()) {
            throw new IllegalArgumentException("prefix: " + prefix + " (expected: 0.." + base.bitLength() + ")");
        }
        for (int bit = prefix; bit < base.bitLength(); bit++) {
            if ((base.byteAt(bit >>> 3) & (0x80 >>> (bit & 7))) != 0) {
                throw new IllegalArgumentException("'" + base + "/" + prefix + "' has host bits set (expected: "
                        + new Cidr(truncate(base, prefix), prefix) + ")");
            }
        }
    }

    /** Parses {@code ADDRESS/PREFIX} or a bare address; throws IllegalArgumentException with the reason. */
    public static Cidr parse(String s) {
        Objects.requireNonNull(s, "cidr");
        int slash = s.indexOf('/');
        String addr = slash < 0 ? s : s.substring(0, slash);
        IpAddress base = IpAddress.parseStrict(addr).orElseThrow(() -> new IllegalArgumentException(
                "'" + s + "' is not a valid network (expected: a canonical IPv4 or IPv6 address, optionally"
                        + " followed by /PREFIX)"));
        if (slash < 0) {
            return new Cidr(base, base.bitLength());
        }
        String p = s.substring(slash + 1);
        if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(c -> c >= '0' && c <= '9')
                || (p.length() > 1 && p.charAt(0) == '0')) {
            throw new IllegalArgumentException("'" + s + "' has an invalid prefix length (expected: 0.."
                    + base.bitLength() + ")");
        }
        return new Cidr(base, Integer.parseInt(p));
    }

    /** True when {@code a} is of the same family and inside this network. */
    public boolean contains(IpAddress a) {
        if (a.isV4() != base.isV4()) {
            return false;
        }
        int full = prefix >>> 3;
        for (int i = 0; i < full; i++) {
            if (a.byteAt(i) != base.byteAt(i)) {
                return false;
            }
        }
        int rest = prefix & 7;
        if (rest == 0) {
            return true;
        }
        int mask = (0xff << (8 - rest)) & 0xff;
        return (a.byteAt(full) & mask) == base.byteAt(full);
    }

    /** True when every address of {@code other} is in this network (same family, prefix at least as long). */
    public boolean contains(Cidr other) {
        return other.prefix >= prefix && contains(other.base);
    }

    /**
     * This network without {@code holes}, as the fewest networks that cover exactly the rest (in address
     * order): {@code ::/8} without {@code ::ffff:0:0/96} is 88 networks. A hole of the other family, or outside
     * this network, takes nothing away.
     */
    public List<Cidr> without(List<Cidr> holes) {
        List<Cidr> out = new ArrayList<>();
        cut(this, holes, out);
        return List.copyOf(out);
    }

    private static void cut(Cidr net, List<Cidr> holes, List<Cidr> out) {
        boolean split = false;
        for (Cidr h : holes) {
            if (h.contains(net)) {
                return;
            }
            split |= net.contains(h);
        }
        if (!split) {
            out.add(net);
            return;
        }
        byte[] upper = net.base.bytes();
        upper[net.prefix >>> 3] |= (byte) (0x80 >>> (net.prefix & 7));
        cut(new Cidr(net.base, net.prefix + 1), holes, out);
        cut(new Cidr(IpAddress.ofBytes(upper), net.prefix + 1), holes, out);
    }

    @Override
    public String toString() {
        return base + "/" + prefix;
    }

    private static IpAddress truncate(IpAddress a, int prefix) {
        byte[] b = a.bytes();
        for (int bit = prefix; bit < b.length * 8; bit++) {
            b[bit >>> 3] &= (byte) ~(0x80 >>> (bit & 7));
        }
        return IpAddress.ofBytes(b);
    }
}
