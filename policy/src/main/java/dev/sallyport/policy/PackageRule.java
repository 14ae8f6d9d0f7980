package dev.sallyport.policy;

import java.util.Objects;

/**
 * One item of a registry's {@code allow} or {@code deny} list: a package name glob ({@code *} stands for any
 * characters, {@code /} included: {@code @acme/*}, {@code *}) and, after an {@code @} that does not start the name,
 * an optional pinned {@link VersionRange} ({@code left-pad@>=1.3.0}, {@code @acme/tool@==2.1.0}).
 *
 * @param range nullable: every version
 */
public record PackageRule(String glob, VersionRange range) {

    /** What a package rule may hold, for error messages. */
    public static final String EXPECTED = "a package name or glob ('@acme/*'), optionally followed by '@' and "
            + VersionRange.EXPECTED;

    public PackageRule {
        Objects.requireNonNull(glob, "glob");
    }

    /** Parses {@code name}, {@code glob} or {@code name@range}; names are spelled as {@code ecosystem} spells them. */
    public static PackageRule parse(Ecosystem ecosystem, String text) {
        String s = text.strip();
        int at = s.indexOf('@', s.startsWith("@") ? 1 : 0);
        String name = at < 0 ? s : s.substring(0, at);
        if (name.isEmpty() || !name.matches("[@A-Za-z0-9._*/~-]+") || name.indexOf('@', 1) >= 0) {
            throw new IllegalArgumentException("'" + text + "' is not a package rule");
        }
        String glob = name.chars().anyMatch(c -> c == '*') ? globSpelling(ecosystem, name) : ecosystem.normalize(name);
        return new PackageRule(glob, at < 0 ? null : VersionRange.parse(s.substring(at + 1)));
    }

    private static String globSpelling(Ecosystem ecosystem, String name) {
        String[] pieces = name.split("\\*", -1);
        for (int i = 0; i < pieces.length; i++) {
            pieces[i] = ecosystem.normalize(pieces[i]);
        }
        return String.join("*", pieces);
    }

    /** True when the glob matches {@code name} (already in its ecosystem's spelling). */
    public boolean matchesName(String name) {
        return glob(glob, 0, name, 0);
    }

    /** True when the glob matches the name and, if pinned, the range holds {@code version}. */
    public boolean matches(Ecosystem ecosystem, String name, String version) {
        return matchesName(name) && (range == null || range.contains(ecosystem, version));
    }

    private static boolean glob(String g, int gi, String s, int si) {
        while (gi < g.length()) {
            char c = g.charAt(gi);
            if (c == '*') {
                for (int k = si; k <= s.length(); k++) {
                    if (glob(g, gi + 1, s, k)) {
                        return true;
                    }
                }
                return false;
            }
            if (si >= s.length() || s.charAt(si) != c) {
                return false;
            }
            gi++;
            si++;
        }
        return si == s.length();
    }

    @Override
    public String toString() {
        return range == null ? glob : glob + "@" + range;
    }
}
