package dev.sallyport.policy;

import java.net.IDN;
import java.util.Locale;
import java.util.Optional;

/**
 * Host name normalization: one spelling per host, so that a rule cannot be dodged by writing a name
 * differently.
 *
 * <ul>
 *   <li>IP literals: {@code [v6]} or bare IPv6, and dotted quads, must pass {@link IpAddress#parseStrict}
 *       and come back in canonical text (without brackets). A name whose last label is numeric
 *       ({@code 127.1}, {@code 2130706433}, {@code 0x7f.1}, {@code 0177.0.0.1}) is an IPv4 literal in the
 *       eyes of resolvers and URL parsers; unless canonical it is refused, never treated as a name.</li>
 *   <li>Names: one trailing dot stripped, Unicode labels converted to punycode with {@link IDN#toASCII}
 *       under STD3 rules (IDNA 2003 mapping, unassigned code points refused), ASCII lowercased. The four
 *       "deviation" characters that IDNA 2003 and 2008 convert differently (ß, final sigma, ZWJ, ZWNJ) are
 *       refused, so that a client library and the proxy cannot reach two different names.
 *       Each label is letters, digits and hyphens (no leading or trailing hyphen), 1..63 characters;
 *       the whole name at most 253. Underscores are refused: they are not valid in host names, and a
 *       lenient resolver could read them differently from us. Labels starting {@code xn--} must be valid
 *       punycode.</li>
 *   <li>Userinfo ({@code @}), ports, paths, percent-escapes, spaces and control characters are refused.</li>
 * </ul>
 */
public final class HostNames {

    /** Longest host name (without the trailing dot). */
    public static final int MAX_NAME = 253;
    /** Longest label. */
    public static final int MAX_LABEL = 63;

    private HostNames() {}

    /**
     * Normalizes a host name or IP literal; throws IllegalArgumentException whose message is the reason,
     * e.g. {@code '127.1' is not a canonical IPv4 address}.
     */
    public static String normalize(String raw) {
        if (raw == null || raw.isEmpty()) {
            throw new IllegalArgumentException("empty host name");
        }
        if (raw.length() > 1024) {
            throw new IllegalArgumentException("host name of " + raw.length() + " characters is longer than "
                    + MAX_NAME);
        }
        if (raw.charAt(0) == '[') {
            if (raw.charAt(raw.length() - 1) != ']') {
                throw new IllegalArgumentException(shown(raw) + " has an unclosed '['");
            }
            return ipv6(raw.substring(1, raw.length() - 1), raw);
        }
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            switch (c) {
                case '@' -> throw new IllegalArgumentException(shown(raw) + " contains userinfo ('@')");
                case '%' -> throw new IllegalArgumentException(shown(raw) + (raw.indexOf(':') >= 0
                        ? " has a zone id ('%'), which is not allowed" : " contains a percent-escape"));
                case '/', '\\', '?', '#' -> throw new IllegalArgumentException(shown(raw) + " contains '" + c + "'");
                default -> {
                    if (c <= 0x20 || c == 0x7f) {
                        throw new IllegalArgumentException(shown(raw) + " contains a space or control character");
                    }
                }
            }
        }
        if (raw.indexOf(':') >= 0) {
            if (raw.indexOf(':') == raw.lastIndexOf(':') && raw.indexOf(':') > 0) {
                throw new IllegalArgumentException(shown(raw) + " contains a port (':')");
            }
            return ipv6(raw, raw);
        }
        String name = raw;
        if (!isAscii(name)) {
            for (int i = 0; i < name.length(); i++) {
                char c = name.charAt(i);
                if (c == '\u00df' || c == '\u03c2' || c == '\u200c' || c == '\u200d') {
                    throw new IllegalArgumentException(shown(raw) + " contains U+" + String.format("%04X", (int) c)
                            + ", which IDNA 2003 and IDNA 2008 convert differently");
                }
            }
            try {
                name = IDN.toASCII(name, IDN.USE_STD3_ASCII_RULES);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(shown(raw) + " is not a valid internationalized name ("
                        + e.getMessage() + ")");
            }
        }
        if (name.endsWith(".")) {
            name = name.substring(0, name.length() - 1);
        }
        name = name.toLowerCase(Locale.ROOT);
        if (name.isEmpty()) {
            throw new IllegalArgumentException(shown(raw) + " is empty");
        }
        if (looksNumeric(name)) {
            Optional<IpAddress> ip = IpAddress.parseStrict(name);
            if (ip.isEmpty()) {
                throw new IllegalArgumentException(shown(raw) + " is not a canonical IPv4 address");
            }
            return ip.get().toString();
        }
        checkLabels(name, raw);
        return name;
    }

    /** True when the normalized host is an IP literal rather than a name. */
    public static boolean isIpLiteral(String normalizedHost) {
        return normalizedHost.indexOf(':') >= 0 || looksNumeric(normalizedHost);
    }

    /**
     * True when the last label is all digits or a {@code 0x} hex number: resolvers and URL parsers (the
     * WHATWG URL standard among them) read such a name as an IPv4 address in some form.
     */
    static boolean looksNumeric(String name) {
        int start = name.lastIndexOf('.') + 1;
        int len = name.length() - start;
        if (len == 0) {
            return false;
        }
        boolean hex = len > 2 && name.charAt(start) == '0'
                && (name.charAt(start + 1) == 'x' || name.charAt(start + 1) == 'X');
        for (int i = hex ? start + 2 : start; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean ok = (c >= '0' && c <= '9') || (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    private static String ipv6(String inner, String raw) {
        if (inner.indexOf('%') >= 0) {
            throw new IllegalArgumentException(shown(raw) + " has a zone id ('%'), which is not allowed");
        }
        return IpAddress.parseStrict(inner).filter(a -> !a.isV4()).map(IpAddress::toString)
                .orElseThrow(() -> new IllegalArgumentException(shown(raw) + " is not a valid IPv6 address"));
    }

    private static void checkLabels(String name, String raw) {
        if (name.length() > MAX_NAME) {
            throw new IllegalArgumentException(shown(raw) + " is longer than " + MAX_NAME + " characters");
        }
        int start = 0;
        while (start <= name.length()) {
            int dot = name.indexOf('.', start);
            int end = dot < 0 ? name.length() : dot;
            checkLabel(name, start, end, raw);
            if (dot < 0) {
                break;
            }
            start = dot + 1;
        }
    }

    private static void checkLabel(String name, int start, int end, String raw) {
        int len = end - start;
        if (len == 0) {
            throw new IllegalArgumentException(shown(raw) + " has an empty label");
        }
        if (len > MAX_LABEL) {
            throw new IllegalArgumentException(shown(raw) + " has a label longer than " + MAX_LABEL + " characters");
        }
        for (int i = start; i < end; i++) {
            char c = name.charAt(i);
            boolean ldh = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
            if (!ldh) {
                throw new IllegalArgumentException(shown(raw) + " contains '" + printable(String.valueOf(c))
                        + "' (only letters, digits, '-' and '.' are allowed)");
            }
        }
        if (name.charAt(start) == '-' || name.charAt(end - 1) == '-') {
            throw new IllegalArgumentException(shown(raw) + " has a label that starts or ends with '-'");
        }
        if (len >= 4 && name.startsWith("xn--", start)) {
            String label = name.substring(start, end);
            String unicode = IDN.toUnicode(label, IDN.USE_STD3_ASCII_RULES);
            boolean valid = !unicode.equals(label);
            if (valid) {
                try {
                    valid = IDN.toASCII(unicode, IDN.USE_STD3_ASCII_RULES).equals(label);
                } catch (IllegalArgumentException e) {
                    valid = false;
                }
            }
            if (!valid) {
                throw new IllegalArgumentException(shown(raw) + " has an invalid punycode label '" + label + "'");
            }
        } else if (len >= 4 && name.charAt(start + 2) == '-' && name.charAt(start + 3) == '-') {
            throw new IllegalArgumentException(shown(raw) + " has a reserved label (hyphens in positions 3 and 4)");
        }
    }

    private static boolean isAscii(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) > 0x7e) {
                return false;
            }
        }
        return true;
    }

    private static String shown(String raw) {
        return "'" + printable(raw) + "'";
    }

    /** Shows control and non-ASCII characters as escapes, so error messages stay one clean line. */
    static String printable(String s) {
        StringBuilder sb = new StringBuilder(Math.min(s.length(), 80) + 8);
        for (int i = 0; i < s.length() && sb.length() < 80; i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                sb.append(String.format("\\x%02x", (int) c));
            } else if (c == '\'') {
                sb.append("\\'");
            } else {
                sb.append(c);
            }
        }
        if (sb.length() >= 80) {
            sb.append("...");
        }
        return sb.toString();
    }
}
