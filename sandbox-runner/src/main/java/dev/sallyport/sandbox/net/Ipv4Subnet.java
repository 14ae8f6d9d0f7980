package dev.sallyport.sandbox.net;

/**
 * An IPv4 network in CIDR form, normalised (host bits must be zero).
 *
 * @param base   the network address as an unsigned 32-bit value in an int
 * @param prefix prefix length, 8..30 (a sandbox network needs a gateway and at least one guest address)
 */
public record Ipv4Subnet(int base, int prefix) {

    public Ipv4Subnet {
        if (prefix < 8 || prefix > 30) {
            throw new IllegalArgumentException("prefix: " + prefix + " (expected: 8..30)");
        }
        if ((base & ~mask(prefix)) != 0) {
            throw new IllegalArgumentException("subnet: " + text(base) + "/" + prefix
                    + " has host bits set (expected: " + text(base & mask(prefix)) + "/" + prefix + ")");
        }
    }

    /** Parses {@code a.b.c.d/n}. */
    public static Ipv4Subnet parse(String cidr) {
        int slash = cidr.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException("subnet: '" + cidr + "' (expected: a.b.c.d/prefix)");
        }
        int prefix;
        try {
            prefix = Integer.parseInt(cidr.substring(slash + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("subnet: '" + cidr + "' has a bad prefix (expected: 8..30)");
        }
        return new Ipv4Subnet(parseAddress(cidr.substring(0, slash)), prefix);
    }

    /** Parses a dotted quad into an int (canonical decimal form only). */
    public static int parseAddress(String dotted) {
        String[] parts = dotted.split("\\.", -1);
        if (parts.length != 4) {
            throw new IllegalArgumentException("address: '" + dotted + "' (expected: a dotted quad)");
        }
        int value = 0;
        for (String part : parts) {
            if (part.isEmpty() || part.length() > 3 || !part.chars().allMatch(Character::isDigit)
                    || (part.length() > 1 && part.charAt(0) == '0')) {
                throw new IllegalArgumentException("address: '" + dotted + "' (expected: a dotted quad)");
            }
            int octet = Integer.parseInt(part);
            if (octet > 255) {
                throw new IllegalArgumentException("address: '" + dotted + "' (expected: octets 0..255)");
            }
            value = (value << 8) | octet;
        }
        return value;
    }

    /** Dotted-quad text of an address held in an int. */
    public static String text(int address) {
        return (address >>> 24) + "." + ((address >>> 16) & 255) + "." + ((address >>> 8) & 255) + "." + (address & 255);
    }

    private static int mask(int prefix) {
        return prefix == 0 ? 0 : -1 << (32 - prefix);
    }

    /** The gateway: the first host address, which the bridge (and the proxy) owns. */
    public String gateway() {
        return text(base + 1);
    }

    /** The {@code n}-th host address (1 = gateway). */
    public String host(int n) {
        if (n < 1 || n > (1 << (32 - prefix)) - 2) {
            throw new IllegalArgumentException("host: " + n + " (expected: 1.." + ((1 << (32 - prefix)) - 2) + ")");
        }
        return text(base + n);
    }

    /** {@code true} when the two networks share any address. */
    public boolean overlaps(Ipv4Subnet other) {
        int shorter = Math.min(prefix, other.prefix);
        return (base & mask(shorter)) == (other.base & mask(shorter));
    }

    /** {@code true} when {@code address} lies inside this network. */
    public boolean contains(int address) {
        return (address & mask(prefix)) == base;
    }

    @Override
    public String toString() {
        return text(base) + "/" + prefix;
    }
}
