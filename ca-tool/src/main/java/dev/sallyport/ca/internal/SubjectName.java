package dev.sallyport.ca.internal;

import java.net.InetAddress;
import java.util.Locale;

/**
 * The name a leaf certificate is minted for: a DNS host name or an IP literal, checked strictly without any DNS
 * lookup. {@code key} is the canonical text used as the cache key.
 *
 * @param key     lowercase host name without trailing dot, or the canonical IP text
 * @param address the IP address for an iPAddress SAN; {@code null} for a DNS name
 */
public record SubjectName(String key, /* @Nullable */ InetAddress address) {
    private static final int MAX_NAME = 253;
    private static final int MAX_LABEL = 63;

    public boolean isIp() {
        return address != null;
    }

    /**
     * Parses a host name or an IP literal (dotted-quad IPv4 in canonical form; IPv6, optionally in brackets).
     *
     * @throws IllegalArgumentException with a one-line reason
     */
    public static SubjectName parse(String raw) {
        if (raw == null || raw.isEmpty()) {
            throw invalid(raw, "empty");
        }
        String s = raw;
        if (s.startsWith("[") && s.endsWith("]")) {
            s = s.substring(1, s.length() - 1);
            if (s.indexOf(':') < 0) {
                throw invalid(raw, "brackets around something that is not an IPv6 literal");
            }
        }
        if (s.indexOf(':') >= 0) {
            return ipv6(raw, s);
        }
        if (isDigitsAndDots(s)) {
            return new SubjectName(s, ipv4(raw, s));
        }
        return dnsName(raw, s);
    }

    private static SubjectName ipv6(String raw, String s) {
        if (s.indexOf('%') >= 0 || (s.indexOf('.') >= 0 && s.lastIndexOf(':') > s.indexOf('.'))) {
            throw invalid(raw, "not a plain IPv6 literal");
        }
        InetAddress a;
        try {
            a = InetAddress.ofLiteral(s);
        } catch (IllegalArgumentException e) {
            throw invalid(raw, "not a valid IPv6 literal");
        }
        return new SubjectName(a.getHostAddress(), a);
    }

    private static InetAddress ipv4(String raw, String s) {
        String[] parts = s.split("\\.", -1);
        if (parts.length != 4) {
            throw invalid(raw, "not a canonical IPv4 literal");
        }
        byte[] bytes = new byte[4];
        for (int i = 0; i < 4; i++) {
            String p = parts[i];
            if (p.isEmpty() || p.length() > 3 || (p.length() > 1 && p.charAt(0) == '0')) {
                throw invalid(raw, "not a canonical IPv4 literal");
            }
            int v = Integer.parseInt(p);
            if (v > 255) {
                throw invalid(raw, "not a canonical IPv4 literal");
            }
            bytes[i] = (byte) v;
        }
        try {
            return InetAddress.getByAddress(bytes);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e); // cannot happen: 4 bytes
        }
    }

    private static SubjectName dnsName(String raw, String s) {
        String name = s.toLowerCase(Locale.ROOT);
        if (name.endsWith(".")) {
            name = name.substring(0, name.length() - 1);
        }
        if (name.isEmpty() || name.length() > MAX_NAME) {
            throw invalid(raw, "length " + name.length());
        }
        int labelStart = 0;
        for (int i = 0; i <= name.length(); i++) {
            char c = i < name.length() ? name.charAt(i) : '.';
            if (c == '.') {
                int len = i - labelStart;
                if (len == 0 || len > MAX_LABEL) {
                    throw invalid(raw, "label of length " + len);
                }
                if (name.charAt(labelStart) == '-' || name.charAt(i - 1) == '-') {
                    throw invalid(raw, "label starts or ends with '-'");
                }
                labelStart = i + 1;
            } else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
                throw invalid(raw, "character '" + printable(c) + "'");
            }
        }
        if (endsInANumber(name)) {
            throw invalid(raw, "ends in a number, which clients read as a non-canonical IPv4 literal");
        }
        return new SubjectName(name, null);
    }

    /** The URL standard's "ends in a number": the last label is all digits, or 0x followed by hex digits. */
    private static boolean endsInANumber(String name) {
        String last = name.substring(name.lastIndexOf('.') + 1);
        if (last.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return true;
        }
        return last.startsWith("0x") && last.substring(2).chars()
                .allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
    }

    private static boolean isDigitsAndDots(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '.' && (c < '0' || c > '9')) {
                return false;
            }
        }
        return true;
    }

    private static String printable(char c) {
        return c >= 0x20 && c < 0x7f ? String.valueOf(c) : String.format("\\u%04x", (int) c);
    }

    private static IllegalArgumentException invalid(String raw, String why) {
        String shown = raw == null ? "" : raw.length() > 80 ? raw.substring(0, 80) + "..." : raw;
        StringBuilder safe = new StringBuilder();
        shown.chars().forEach(c -> safe.append(printable((char) c)));
        return new IllegalArgumentException("host '" + safe + "': " + why
                + " (expected: an ASCII host name, a canonical IPv4 literal or an IPv6 literal)");
    }
}
