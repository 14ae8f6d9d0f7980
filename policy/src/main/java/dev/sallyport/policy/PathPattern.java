package dev.sallyport.policy;

import java.util.Arrays;
import java.util.Objects;

/**
 * A path glob of a rule: segments separated by {@code /}, where a whole segment {@code *} matches exactly
 * one non-empty segment and {@code **} matches any number of segments (zero included, so
 * {@code /repos/acme/**} matches {@code /repos/acme} and everything below it). Other segments match
 * literally; they are written in the normalized form of {@link PathNormalizer} (and normalized when
 * parsed), so {@code /a%2db} and {@code /a-b} are one pattern. A star inside a segment ({@code /v1/*.json})
 * is refused. Matching walks segments with offsets: no regex, no allocation.
 */
public final class PathPattern {

    /** What a valid pattern looks like, for error messages. */
    public static final String EXPECTED = "'/' followed by segments, each literal, '*' (one segment) or '**' (any depth)";

    private static final String ONE = "*";
    private static final String ANY = "**";

    private final String text;
    private final String[] segments; // ONE, ANY or a literal (a literal never contains '*')
    private final boolean trailingSlash;

    private PathPattern(String text, String[] segments, boolean trailingSlash) {
        this.text = text;
        this.segments = segments;
        this.trailingSlash = trailingSlash;
    }

    /** Parses a glob; throws IllegalArgumentException with the reason. */
    public static PathPattern parse(String s) {
        Objects.requireNonNull(s, "path pattern");
        String shown = "'" + HostNames.printable(s) + "'";
        if (s.isEmpty() || s.charAt(0) != '/') {
            throw new IllegalArgumentException(shown + " does not start with '/'");
        }
        if (s.indexOf('?') >= 0) {
            throw new IllegalArgumentException(shown + " contains a query ('?'); paths are matched without it");
        }
        String[] raw = s.substring(1).split("/", -1);
        String[] segs = new String[raw.length];
        int n = 0;
        for (int i = 0; i < raw.length; i++) {
            String seg = raw[i];
            if (seg.equals("*")) {
                segs[n++] = ONE;
            } else if (seg.equals("**")) {
                if (n > 0 && ANY.equals(segs[n - 1])) {
                    continue;
                }
                segs[n++] = ANY;
            } else if (seg.indexOf('*') >= 0) {
                throw new IllegalArgumentException(shown + " has a star inside a segment ('" + seg + "')");
            } else if (seg.isEmpty()) {
                if (i != raw.length - 1 && !(raw.length == 1)) {
                    throw new IllegalArgumentException(shown + " has an empty segment ('//')");
                }
            } else {
                String norm;
                try {
                    norm = PathNormalizer.normalize("/" + seg);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(shown + (e.getMessage().contains("climbs")
                            ? " has a dot segment ('" + seg + "')" : ": " + e.getMessage()));
                }
                if (norm.length() <= 1 || norm.indexOf('/', 1) >= 0) {
                    throw new IllegalArgumentException(shown + " has a dot segment ('" + seg + "')");
                }
                segs[n++] = norm.substring(1);
            }
        }
        boolean trailing = s.length() > 1 && s.endsWith("/");
        String[] compact = Arrays.copyOf(segs, n);
        StringBuilder text = new StringBuilder();
        for (String seg : compact) {
            text.append('/').append(seg);
        }
        if (trailing || text.isEmpty()) {
            text.append('/');
        }
        return new PathPattern(text.toString(), compact, trailing);
    }

    /**
     * Matches a path from {@link PathNormalizer#normalize}. A trailing slash in the pattern requires one
     * in the path; a trailing slash in the path is matched by {@code **} or a pattern that ends in one.
     */
    public boolean matches(String normalizedPath) {
        int len = normalizedPath.length();
        boolean pathTrailing = len > 1 && normalizedPath.charAt(len - 1) == '/';
        int pathEnd = pathTrailing ? len - 1 : len;
        boolean endsWithAny = segments.length > 0 && ANY.equals(segments[segments.length - 1]);
        if (pathTrailing != trailingSlash && !(pathTrailing && endsWithAny)) {
            return false;
        }
        // Classic wildcard matching with one backtrack point, over segments instead of characters.
        int si = 0;       // pattern segment index
        int p = 1;        // start of the current path segment; the path's segments lie in [1, pathEnd)
        int starSi = -1;  // index of the last '**' seen
        int starP = -1;   // path position that '**' has absorbed up to
        while (p < pathEnd) {
            int segEnd = normalizedPath.indexOf('/', p);
            if (segEnd < 0 || segEnd > pathEnd) {
                segEnd = pathEnd;
            }
            if (si < segments.length && ANY.equals(segments[si])) {
                starSi = si++;
                starP = p;
            } else if (si < segments.length
                    && (ONE.equals(segments[si]) || regionEquals(normalizedPath, p, segEnd, segments[si]))) {
                si++;
                p = segEnd + 1;
            } else if (starSi >= 0) {
                int next = normalizedPath.indexOf('/', starP);
                starP = next < 0 || next >= pathEnd ? pathEnd : next + 1;
                si = starSi + 1;
                p = starP;
            } else {
                return false;
            }
        }
        while (si < segments.length && ANY.equals(segments[si])) {
            si++;
        }
        return si == segments.length;
    }

    private static boolean regionEquals(String path, int from, int to, String seg) {
        return to - from == seg.length() && path.regionMatches(from, seg, 0, seg.length());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PathPattern other && text.equals(other.text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    @Override
    public String toString() {
        return text;
    }
}
