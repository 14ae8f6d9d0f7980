package dev.sallyport.policy;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.Optional;

/**
 * An IPv4 or IPv6 address, parsed by our own strict parser and never by {@link InetAddress} (whose text
 * parsing accepts forms that resolvers and proxies read differently).
 *
 * <p>Accepted text: the canonical dotted quad ({@code 127.0.0.1}; no leading zeros, no short, octal, hex
 * or decimal forms) and RFC 4291 IPv6 text (hex groups, at most one {@code ::}, an optional trailing
 * dotted quad, no zone id, no brackets). {@link #toString()} gives the canonical form: dotted quad, or
 * RFC 5952 IPv6 (lowercase, longest run of zero groups compressed).
 */
public final class IpAddress {

    private final byte[] bytes;

    private IpAddress(byte[] bytes) {
        this.bytes = bytes;
    }

    /** Parses canonical IPv4 or standard IPv6 text; empty for anything else. */
    public static Optional<IpAddress> parseStrict(String text) {
        if (text == null || text.isEmpty() || text.length() > 45) {
            return Optional.empty();
        }
        byte[] b = text.indexOf(':') >= 0 ? parseV6(text) : parseV4(text, 0, text.length());
        return b == null ? Optional.empty() : Optional.of(new IpAddress(b));
    }

    /** Wraps a resolved address (an IPv4-mapped IPv6 address from the JDK stays as the JDK gives it). */
    public static IpAddress of(InetAddress address) {
        return new IpAddress(address.getAddress().clone());
    }

    /** An address from its 4 or 16 bytes. */
    public static IpAddress ofBytes(byte[] bytes) {
        if (bytes.length != 4 && bytes.length != 16) {
            throw new IllegalArgumentException("address: " + bytes.length + " bytes (expected: 4 or 16)");
        }
        return new IpAddress(bytes.clone());
    }

    /** A copy of the 4 or 16 address bytes, network order. */
    public byte[] bytes() {
        return bytes.clone();
    }

    public boolean isV4() {
        return bytes.length == 4;
    }

    /** The byte at {@code index}, 0..255, without copying. */
    public int byteAt(int index) {
        return bytes[index] & 0xff;
    }

    /** The bit length: 32 or 128. */
    public int bitLength() {
        return bytes.length * 8;
    }

    public InetAddress toInetAddress() {
        try {
            return InetAddress.getByAddress(bytes.clone()); // no lookup: bytes given
        } catch (UnknownHostException e) {
            throw new IllegalStateException("unreachable: address of " + bytes.length + " bytes", e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IpAddress other && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return isV4() ? v4Text(0) : v6Text();
    }

    private String v4Text(int offset) {
        return byteAt(offset) + "." + byteAt(offset + 1) + "." + byteAt(offset + 2) + "." + byteAt(offset + 3);
    }

    private String v6Text() {
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = (byteAt(2 * i) << 8) | byteAt(2 * i + 1);
        }
        int bestStart = -1;
        int bestLen = 1; // RFC 5952: a single zero group is not compressed
        for (int i = 0; i < 8; ) {
            if (groups[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && groups[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                bestStart = i;
                bestLen = j - i;
            }
            i = j;
        }
        StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (!sb.isEmpty() && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(groups[i]));
        }
        return sb.toString();
    }

    /** Canonical dotted quad only: four decimal parts 0..255, no leading zeros, no signs. */
    private static byte[] parseV4(String s, int from, int to) {
        byte[] out = new byte[4];
        int part = 0;
        int i = from;
        while (part < 4) {
            int start = i;
            int value = 0;
            while (i < to && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
                value = value * 10 + (s.charAt(i) - '0');
                i++;
                if (i - start > 3) {
                    return null;
                }
            }
            int len = i - start;
            if (len == 0 || value > 255 || (len > 1 && s.charAt(start) == '0')) {
                return null;
            }
            out[part++] = (byte) value;
            if (part < 4) {
                if (i >= to || s.charAt(i) != '.') {
                    return null;
                }
                i++;
            }
        }
        return i == to ? out : null;
    }

    /** The value of an ASCII hex digit, or -1 (never a non-ASCII digit, unlike {@code Character.digit}). */
    static int hex(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }

    /** RFC 4291 section 2.2 text forms; no zone id ({@code %}), no brackets. */
    private static byte[] parseV6(String s) {
        int n = s.length();
        int[] groups = new int[8];
        int count = 0;
        int gap = -1; // group index where "::" stands
        int i = 0;
        if (s.startsWith("::")) {
            gap = 0;
            i = 2;
            if (i == n) {
                return new byte[16];
            }
        } else if (s.charAt(0) == ':') {
            return null;
        }
        byte[] tailV4 = null;
        while (i < n) {
            if (count == 8) {
                return null;
            }
            int start = i;
            int value = 0;
            while (i < n && hex(s.charAt(i)) >= 0 && i - start < 5) {
                value = (value << 4) | hex(s.charAt(i));
                i++;
            }
            if (i < n && s.charAt(i) == '.') { // trailing dotted quad
                if (count > 6) {
                    return null;
                }
                tailV4 = parseV4(s, start, n);
                if (tailV4 == null) {
                    return null;
                }
                groups[count++] = ((tailV4[0] & 0xff) << 8) | (tailV4[1] & 0xff);
                groups[count++] = ((tailV4[2] & 0xff) << 8) | (tailV4[3] & 0xff);
                i = n;
                break;
            }
            int len = i - start;
            if (len == 0 || len > 4) {
                return null;
            }
            groups[count++] = value;
            if (i == n) {
                break;
            }
            if (s.charAt(i) != ':') {
                return null; // '%' (zone id), '/', ']' and everything else
            }
            i++;
            if (i < n && s.charAt(i) == ':') {
                if (gap >= 0) {
                    return null; // a second "::"
                }
                gap = count;
                i++;
                if (i == n) {
                    break;
                }
            } else if (i == n) {
                return null; // trailing single ':'
            }
        }
        if (gap < 0 && count != 8) {
            return null;
        }
        if (gap >= 0 && count > 7) {
            return null; // "::" must stand for at least one group
        }
        int[] full = new int[8];
        if (gap < 0) {
            full = groups;
        } else {
            int tail = count - gap;
            System.arraycopy(groups, 0, full, 0, gap);
            System.arraycopy(groups, gap, full, 8 - tail, tail);
        }
        byte[] out = new byte[16];
        for (int g = 0; g < 8; g++) {
            out[2 * g] = (byte) (full[g] >>> 8);
            out[2 * g + 1] = (byte) full[g];
        }
        return out;
    }
}
