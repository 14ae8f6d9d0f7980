package dev.sallyport.policy;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

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
 *   <li>Refused, because a backend that decodes again or decodes overlong UTF-8 would read another path:
 *       an escaped {@code %} ({@code %25}) before an escape of {@code % . / \ ? # ;}, a control character
 *       or a byte above 0x7E, or before {@code u} ({@code %252e}, {@code %252F}, {@code %255c},
 *       {@code %25252e}, {@code %25%32%65}, {@code %25u002e}); overlong UTF-8 ({@code %c0%ae},
 *       {@code %e0%80%ae}). {@code %2520} or {@code %2541} stay allowed: a second decoding changes only
 *       characters inside a segment.</li>
 *   <li>Doubled slashes collapse ({@code //a} = {@code /a}); dot segments resolve ({@code /a/./b/../c}
 *       = {@code /a/c}); a {@code ..} above the root is refused, and so are {@code .;} / {@code ..;}
 *       segments that some servers read as dot segments. A trailing slash is kept.</li>
 * </ol>
 * Case is kept: paths are case-sensitive.
 *
 * <p>{@link #slashReadings} reads a path that holds an escaped slash for the rules that allow one
 * ({@code allow_encoded_slash}): every step above, with {@code %2F} kept as an escape inside its segment, gives the
 * readings as sent; the same readings with {@code %2F} as a separator are what such a rule decides on. Refused there
 * too: an escaped slash that makes an empty segment, a dot segment or a {@code .;} segment once it separates
 * ({@code /public/..%2Fprivate}, {@code /public%2F../secret}, {@code /a%2F%2Fb}, {@code /%2Fa}).
 */
public final class PathNormalizer {

    /**
     * The bytes that must not appear one decoding deeper: controls, {@code % . / \ ? # ;}, and bytes above
     * 0x7E (overlong or raw bytes). Escapes of letters, digits, space and other punctuation only change
     * characters inside a segment.
     */
    private static final BitSet SECOND_DECODING_REFUSED = refusedSecond();

    /** An escaped slash in canonical text: the only way {@code %2F} appears there (a literal {@code %} is {@code %25}). */
    private static final String ENCODED_SLASH = "%2F";

    private PathNormalizer() {}

    /** Normalizes {@code rawPathAndQuery}; throws IllegalArgumentException with the reason. */
    public static String normalize(String rawPathAndQuery) {
        String raw = pathOf(rawPathAndQuery);
        return isAlreadyNormal(raw) ? raw : resolveSegments(decoded(raw));
    }

    /**
     * Every path a backend may read for {@code rawPathAndQuery}, each normalized, {@link #normalize}'s first.
     * Then, where they differ: the path with {@code ;parameters} dropped from each segment (as Java servlet
     * containers read {@code /admin;x/y}: {@code /admin/y}); the path cut at an escaped {@code ?} or
     * {@code #} (as a backend that decodes before it splits off the query reads {@code /a/secret%3F/../b}:
     * {@code /a/secret}); and the path cut and without parameters. A rule decides a request only when it
     * decides every reading the same way. Throws as normalize does, and when a reading climbs above the root.
     */
    public static List<String> readings(String rawPathAndQuery) {
        String raw = pathOf(rawPathAndQuery);
        boolean normal = isAlreadyNormal(raw);
        String canonical = normal ? raw : decoded(raw);
        return readingsOf(canonical, normal ? raw : resolveSegments(canonical));
    }

    /**
     * The readings of a path already decoded into its canonical escapes, {@code first} its normal form; with an
     * escaped {@code %} before an escape ({@code %2565}), also the readings of a backend that decodes twice
     * ({@code e}): a second decoding changes only characters inside a segment, but those can spell a denied one
     * ({@code /s%2565cret} is {@code /secret} there; found by {@code PathFuzzTest}).
     */
    private static List<String> readingsOf(String canonical, String first) {
        String twice = decodedAgain(canonical);
        if (twice == null) {
            return readingsOnce(canonical, first);
        }
        Set<String> out = new LinkedHashSet<>(readingsOnce(canonical, first));
        out.addAll(readingsOnce(twice, resolveSegments(twice)));
        return List.copyOf(out);
    }

    private static List<String> readingsOnce(String canonical, String first) {
        int stop = firstEscapedStop(canonical);
        boolean parameters = canonical.indexOf(';') >= 0;
        if (stop < 0 && !parameters) {
            return List.of(first);
        }
        Set<String> out = new LinkedHashSet<>();
        out.add(first);
        if (parameters) {
            out.add(resolveSegments(withoutParameters(canonical)));
        }
        if (stop >= 0) {
            String cut = canonical.substring(0, stop);
            out.add(resolveSegments(cut));
            out.add(resolveSegments(withoutParameters(cut)));
        }
        return List.copyOf(out);
    }

    /**
     * The readings of a path with an escaped slash: {@code kept} as a backend that keeps {@code %2F} inside its
     * segment reads them ({@link #readings}, {@code %2F} left escaped), {@code decoded} the same readings, in the
     * same order, with {@code %2F} as a separator. Throws IllegalArgumentException as {@link #readings} does, and
     * when a decoded escape makes an empty segment or a dot segment.
     */
    public static SlashReadings slashReadings(String rawPathAndQuery) {
        String raw = pathOf(rawPathAndQuery);
        String canonical = canonicalEscapes(raw, true);
        refuseBackendDecodings(canonical);
        List<String> kept = readingsOf(canonical, resolveSegments(canonical));
        List<String> decoded = new ArrayList<>(kept.size());
        for (String reading : kept) {
            String asSeparators = reading.replace(ENCODED_SLASH, "/");
            String resolved;
            try {
                resolved = resolveSegments(asSeparators);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("encoded slash %2F makes " + e.getMessage(), e);
            }
            if (!resolved.equals(asSeparators)) {
                throw new IllegalArgumentException("encoded slash %2F makes an empty or dot segment");
            }
            decoded.add(asSeparators);
        }
        return new SlashReadings(kept, decoded);
    }

    /** True when the path of {@code rawPathAndQuery} (before any query) spells an escaped slash, in either case. */
    public static boolean hasEncodedSlash(String rawPathAndQuery) {
        int end = rawPathAndQuery.indexOf('?');
        int stop = end < 0 ? rawPathAndQuery.length() : end;
        for (int i = rawPathAndQuery.indexOf('%'); i >= 0 && i + 2 < stop; i = rawPathAndQuery.indexOf('%', i + 1)) {
            if (rawPathAndQuery.charAt(i + 1) == '2' && (rawPathAndQuery.charAt(i + 2) | 0x20) == 'f') {
                return true;
            }
        }
        return false;
    }

    /**
     * The readings of a path with an escaped slash ({@link #slashReadings}): {@code kept[i]} and {@code decoded[i]}
     * are one reading, with {@code %2F} inside its segment and as a separator; the first of each is the normal one.
     */
    public record SlashReadings(List<String> kept, List<String> decoded) {
        public SlashReadings {
            kept = List.copyOf(kept);
            decoded = List.copyOf(decoded);
        }
    }

    private static String pathOf(String rawPathAndQuery) {
        if (rawPathAndQuery == null || rawPathAndQuery.isEmpty()) {
            throw new IllegalArgumentException("empty path");
        }
        int end = rawPathAndQuery.indexOf('?');
        String raw = end < 0 ? rawPathAndQuery : rawPathAndQuery.substring(0, end);
        if (raw.isEmpty() || raw.charAt(0) != '/') {
            throw new IllegalArgumentException("path does not start with '/'");
        }
        return raw;
    }

    /** The path decoded once into its canonical escapes, refused when another decoder would read more. */
    private static String decoded(String raw) {
        String canonical = canonicalEscapes(raw, false);
        refuseBackendDecodings(canonical);
        return canonical;
    }

    /**
     * {@code canonical} as a backend that decodes once more reads it, in canonical escapes, or null when no
     * {@code %25} stands before two hex digits. What it may decode is already limited by
     * {@link #refuseBackendDecodings}: letters, digits, space and punctuation other than {@code % . / \ ? # ;}.
     */
    private static String decodedAgain(String canonical) {
        StringBuilder sb = null;
        for (int i = 0; i < canonical.length(); i++) {
            int b = canonical.startsWith("%25", i) ? hexPair(canonical, i + 3) : -1;
            if (b < 0) {
                if (sb != null) {
                    sb.append(canonical.charAt(i));
                }
                continue;
            }
            if (sb == null) {
                sb = new StringBuilder(canonical.length()).append(canonical, 0, i);
            }
            if (b > 0x20 && b < 0x7f) {
                sb.append((char) b);
            } else {
                appendEscape(sb, b);
            }
            i += 4;
        }
        return sb == null ? null : sb.toString();
    }

    /** Where the first escaped {@code ?} or {@code #} ({@code %3F} / {@code %23} in canonical text) stands, or -1. */
    private static int firstEscapedStop(String canonical) {
        int q = canonical.indexOf("%3F");
        int h = canonical.indexOf("%23");
        return q < 0 ? h : h < 0 ? q : Math.min(q, h);
    }

    /** Each segment without its {@code ;} and what follows it up to the next {@code /}. */
    private static String withoutParameters(String path) {
        StringBuilder sb = new StringBuilder(path.length());
        boolean skipping = false;
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c == '/') {
                skipping = false;
            } else if (c == ';') {
                skipping = true;
            }
            if (!skipping) {
                sb.append(c);
            }
        }
        return sb.toString();
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

    /** {@code keepSlash}: an escaped slash stays {@code %2F} (for {@link #slashReadings}) instead of being refused. */
    private static String canonicalEscapes(String raw, boolean keepSlash) {
        StringBuilder sb = new StringBuilder(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '%') {
                int b = hexPair(raw, i + 1);
                if (b < 0) {
                    throw new IllegalArgumentException("invalid percent-escape at offset " + i);
                }
                if (keepSlash && b == '/') {
                    sb.append(ENCODED_SLASH);
                } else {
                    appendDecoded(sb, b);
                }
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

    @SuppressWarnings("OrphanedFormatString")   // %2F and %5C are the percent-encodings the messages name
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

    /**
     * Refuses what a backend that decodes differently would read as another path. {@code canonical} is the
     * once-decoded path, every byte that stays escaped written {@code %XX} (a literal {@code %} as
     * {@code %25}), so hex digits after a {@code %25} are always raw here.
     * <ul>
     *   <li>a literal {@code %} followed by {@code u} (IIS {@code %u002e}) or by an escape of a byte in
     *       {@link #SECOND_DECODING_REFUSED}: a backend that decodes twice reads a dot, a separator, a query,
     *       a parameter, a control character, a raw byte or one more escape there ({@code %252e},
     *       {@code %252f}, {@code %255c}, {@code %25252e}, {@code %25%32%65}, any case);</li>
     *   <li>an overlong UTF-8 sequence ({@code C0}, {@code C1}, {@code E0 80..9F}, {@code F0 80..8F}): a
     *       decoder that accepts it reads ASCII ({@code %c0%ae} is {@code .}, {@code %c0%af} is
     *       {@code /}).</li>
     * </ul>
     */
    private static void refuseBackendDecodings(String canonical) {
        for (int i = canonical.indexOf('%'); i >= 0; i = canonical.indexOf('%', i + 1)) {
            int b = escapedByte(canonical, i);
            if (b == '%') {
                char next = i + 3 < canonical.length() ? canonical.charAt(i + 3) : 0;
                int second = hexPair(canonical, i + 3);
                if (next == 'u' || next == 'U' || (second >= 0 && SECOND_DECODING_REFUSED.get(second))) {
                    throw new IllegalArgumentException("double encoding at offset " + i + ": an escaped '%' before"
                            + " what a second decoding reads as a dot, separator, query, parameter or escape");
                }
            }
            int following = escapedByte(canonical, i + 3);
            if (b == 0xC0 || b == 0xC1 || (b == 0xE0 && following >= 0x80 && following <= 0x9F)
                    || (b == 0xF0 && following >= 0x80 && following <= 0x8F)) {
                throw new IllegalArgumentException("overlong UTF-8 sequence at offset " + i);
            }
        }
    }

    private static BitSet refusedSecond() {
        BitSet set = new BitSet(256);
        set.set(0, 0x20);
        set.set(0x7f, 256);
        for (char c : "%./\\?#;".toCharArray()) {
            set.set(c);
        }
        return set;
    }

    /** The byte that {@code %XX} at {@code at} stands for, or -1 when there is no such escape there. */
    private static int escapedByte(String s, int at) {
        return at < s.length() && s.charAt(at) == '%' ? hexPair(s, at + 1) : -1;
    }

    /** The byte of the two hex digits at {@code at}, or -1. */
    private static int hexPair(String s, int at) {
        int hi = hex(s, at);
        int lo = hex(s, at + 1);
        return hi < 0 || lo < 0 ? -1 : (hi << 4) | lo;
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
