package dev.sallyport.policy;

import java.util.Objects;

/**
 * A host pattern of a rule or secret: an exact host ({@code api.example.com}, an IP literal) or
 * {@code *.example.com}, which matches every subdomain at any depth and never {@code example.com} itself.
 * Both forms are normalized as {@link HostNames#normalize} does; matching compares normalized text only.
 * Refused: {@code *}, {@code *.com} (fewer than two labels after {@code *.}), stars anywhere else,
 * wildcards over IP literals, ports, paths and userinfo.
 */
public final class HostPattern {

    /** What a valid pattern looks like, for error messages. */
    public static final String EXPECTED =
            "an exact host name or '*.' followed by a name with at least two labels";

    private final String text;
    private final String suffix; // normalized name after "*.", or null for an exact pattern
    private final String dotSuffix;

    private HostPattern(String text, String suffix) {
        this.text = text;
        this.suffix = suffix;
        this.dotSuffix = suffix == null ? null : "." + suffix;
    }

    /** Parses a pattern; throws IllegalArgumentException with the reason. */
    public static HostPattern parse(String s) {
        Objects.requireNonNull(s, "host pattern");
        String shown = "'" + HostNames.printable(s) + "'";
        if (s.startsWith("*.")) {
            String rest = s.substring(2);
            if (rest.indexOf('*') >= 0) {
                throw new IllegalArgumentException(shown + " is not a valid pattern");
            }
            String name = normalizePart(rest, shown);
            if (HostNames.isIpLiteral(name)) {
                throw new IllegalArgumentException(shown + " is not a valid pattern (a wildcard over an IP address)");
            }
            if (name.indexOf('.') < 0) {
                throw new IllegalArgumentException(shown + " is not a valid pattern (it would match a whole"
                        + " top-level domain)");
            }
            return new HostPattern("*." + name, name);
        }
        if (s.indexOf('*') >= 0) {
            throw new IllegalArgumentException(shown + " is not a valid pattern");
        }
        return new HostPattern(normalizePart(s, shown), null);
    }

    /** An exact pattern for an already normalized host. */
    static HostPattern exact(String normalizedHost) {
        return new HostPattern(normalizedHost, null);
    }

    private static String normalizePart(String s, String shown) {
        if (s.indexOf(':') >= 0 && !s.startsWith("[") && s.indexOf(':') == s.lastIndexOf(':')) {
            throw new IllegalArgumentException(shown + " is not a valid pattern (a port belongs in 'ports')");
        }
        if (s.indexOf('/') >= 0) {
            throw new IllegalArgumentException(shown + " is not a valid pattern (a path belongs in 'paths')");
        }
        if (s.indexOf('@') >= 0) {
            throw new IllegalArgumentException(shown + " is not a valid pattern (userinfo '@')");
        }
        try {
            return HostNames.normalize(s);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(shown + " is not a valid pattern (" + e.getMessage() + ")");
        }
    }

    /** True for a {@code *.} pattern. */
    public boolean isWildcard() {
        return suffix != null;
    }

    /** The exact host, or for a wildcard the name after {@code *.}. */
    public String name() {
        return suffix == null ? text : suffix;
    }

    /** Matches a host already normalized by {@link HostNames#normalize}. */
    public boolean matches(String normalizedHost) {
        if (suffix == null) {
            return text.equals(normalizedHost);
        }
        return normalizedHost.length() > dotSuffix.length() && normalizedHost.endsWith(dotSuffix)
                && normalizedHost.charAt(normalizedHost.length() - dotSuffix.length() - 1) != '.';
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HostPattern other && text.equals(other.text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    /** The normalized pattern text, e.g. {@code *.example.com}. */
    @Override
    public String toString() {
        return text;
    }
}
