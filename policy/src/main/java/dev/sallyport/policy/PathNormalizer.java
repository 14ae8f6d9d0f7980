package dev.sallyport.policy;

import java.util.ArrayList;
import java.util.List;

/**
 * Turns a request target's path into the one spelling that rules match, so that two spellings of one
 * path can never get two decisions. Throws IllegalArgumentException (reason {@link Reasons#INVALID_PATH})
 * for what is ambiguous.
 *
 * <ol>
 *   <li>The query ({@code ?...}) is stripped. A {@code #} is refused (it never belongs in a request).</li>
 *   <li>The path must start with {@code /}.</li>
 *   <li>Refused: control characters and NUL (raw or escaped), backslash (raw or {@code %5C}), an escaped
 *       slash {@code %2F} (servers disagree on whether it separates segments), invalid escapes
 *       ({@code %}, {@code %4}, {@code %zz}), characters above U+00FF.</li>
 *   <li>Escapes are canonical: an escape of a printable ASCII character other than {@code % / ? # \}
 *       is decoded ({@code %61} = {@code a}, {@code %2e} = {@code .}, {@code %3B} = {@code ;}); the
 *       rest stay escaped with uppercase hex ({@code %3f} = {@code %3F}, {@code %25} stays). A space or
 *       character U+0080..U+00FF (a raw byte) is escaped. No escape is decoded twice.</li>
 *   <li>Doubled slashes collapse ({@code //a} = {@code /a}); dot segments resolve ({@code /a/./b/../c}
 *       = {@code /a/c}); a {@code ..} above the root is refused, and so are {@code .;} / {@code ..;}
 *       segments that some servers read as dot segments. A trailing slash is kept.</li>
 * </ol>
 * Case is kept: paths are case-sensitive.
 */
public final class PathNormalizer {

    private PathNormalizer() {}

    /** Normalizes {@code rawPathAndQuery}; throws IllegalArgumentException with the reason. */
    public static String normalize(String rawPathAndQuery) {
        if (rawPathAndQuery == null || rawPathAndQuery.isEmpty()) {
            throw new IllegalArgumentException("empty path");
        }
        int end = rawPathAndQuery.indexOf('?');
        String raw = end < 0 ? rawPathAndQuery : rawPathAndQuery.substring(0, end);
        if (raw.isEmpty() || raw.charAt(0) != '/') {
            throw new IllegalArgumentException("path does not start with '/'");
        }
        if (isAlreadyNormal(raw)) {
            return raw;
        }
        String decoded = canonicalEscapes(raw);
        return resolveSegments(decoded);
    }

    /**
     * The common case, checked in one pass without allocating: printable ASCII other than {@code % \ #},
     * no empty segment, no segment starting with a dot.
     */
    private static boolean isAlreadyNormal(String raw) {
        char prev = 0;
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c <= 0x20 || c >= 0x7f || c == '%' || c == '\\' || c == '#') {
                return false;
            }
            if (prev == '/' && (c == '/' || c == '.')) {
                return false;
            }
            prev = c;
        }
        return true;
    }

    private static String canonicalEscapes(String raw) {
        StringBuilder sb = new StringBuilder(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '%') {
                int hi = hex(raw, i + 1);
                int lo = hex(raw, i + 2);
                if (hi < 0 || lo < 0) {
                    throw new IllegalArgumentException("invalid percent-escape at offset " + i);
                }
                appendDecoded(sb, (hi << 4) | lo);
                i += 2;
            } else if (c == '\\') {
                throw new IllegalArgumentException("backslash in path");
            } else if (c == '#') {
                throw new IllegalArgumentException("'#' in path");
            } else if (c < 0x20 || c == 0x7f) {
                throw new IllegalArgumentException("control character in path");
            } else if (c > 0xff) {
                throw new IllegalArgumentException("character above U+00FF in path");
            } else if (c == ' ' || c > 0x7e) {
                appendEscape(sb, c);
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    private static void appendDecoded(StringBuilder sb, int b) {
        if (b == '/') {
            throw new IllegalArgumentException("encoded slash %2F in path");
        }
        if (b == '\\') {
            throw new IllegalArgumentException("encoded backslash %5C in path");
        }
        if (b < 0x20 || b == 0x7f) {
            throw new IllegalArgumentException("encoded control character or NUL in path");
        }
        if (b == '%' || b == '?' || b == '#' || b == ' ' || b > 0x7e) {
            appendEscape(sb, b);
        } else {
            sb.append((char) b);
        }
    }

    private static void appendEscape(StringBuilder sb, int b) {
        sb.append('%').append(Character.toUpperCase(Character.forDigit(b >>> 4, 16)))
                .append(Character.toUpperCase(Character.forDigit(b & 15, 16)));
    }

    private static int hex(String s, int i) {
        return i < s.length() ? IpAddress.hex(s.charAt(i)) : -1;
    }

    private static String resolveSegments(String path) {
        List<String> out = new ArrayList<>();
        boolean trailingSlash = false;
        int start = 1;
        while (start <= path.length()) {
            int slash = path.indexOf('/', start);
            int end = slash < 0 ? path.length() : slash;
            String seg = path.substring(start, end);
            boolean last = slash < 0;
            trailingSlash = false;
            if (seg.isEmpty()) {
                trailingSlash = true; // "//" collapses; a final empty segment is a trailing slash
            } else if (seg.equals(".")) {
                trailingSlash = true;
            } else if (seg.equals("..")) {
                if (out.isEmpty()) {
                    throw new IllegalArgumentException("'..' climbs above the root");
                }
                out.removeLast();
                trailingSlash = true;
            } else if (seg.startsWith(".;") || seg.startsWith("..;")) {
                throw new IllegalArgumentException("dot segment with parameters ('" + seg + "')");
            } else {
                out.add(seg);
            }
            if (last) {
                break;
            }
            start = slash + 1;
        }
        if (out.isEmpty()) {
            return "/";
        }
        StringBuilder sb = new StringBuilder(path.length());
        for (String seg : out) {
            sb.append('/').append(seg);
        }
        if (trailingSlash) {
            sb.append('/');
        }
        return sb.toString();
    }
}
