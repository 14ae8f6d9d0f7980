package dev.sallyport.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A package ecosystem a {@code registries:} entry serves: how its package names are spelled (one spelling per
 * package) and how its versions are ordered. Versions that do not parse sort before every version that does, by
 * their text.
 */
public enum Ecosystem {
    /** npm: names as published (lowercase today), versions per Semantic Versioning 2.0. */
    NPM("npm"),
    /** PyPI: names normalized as PEP 503 says, versions ordered as PEP 440 says (release, pre, post, dev). */
    PYPI("PyPI");

    private final String osvName;

    Ecosystem(String osvName) {
        this.osvName = osvName;
    }

    /** The ecosystem's name in OSV records ({@code affected[].package.ecosystem}). */
    public String osvName() {
        return osvName;
    }

    /** The policy file's spelling: {@code npm} or {@code pypi}. */
    public String key() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@code npm} or {@code pypi}. */
    public static Ecosystem parse(String s) {
        return switch (s) {
            case "npm" -> NPM;
            case "pypi" -> PYPI;
            default -> throw new IllegalArgumentException("'" + s + "' is not an ecosystem");
        };
    }

    /** The one spelling of a package name: PyPI folds case and runs of {@code - _ .} into {@code -}. */
    public String normalize(String name) {
        return switch (this) {
            case NPM -> name;
            case PYPI -> name.toLowerCase(Locale.ROOT).replaceAll("[-_.]+", "-");
        };
    }

    /** Orders two versions of this ecosystem. */
    public int compare(String a, String b) {
        List<Object> ka = key(a);
        List<Object> kb = key(b);
        if (ka == null || kb == null) {
            return ka == null && kb == null ? a.compareTo(b) : ka == null ? -1 : 1;
        }
        return compareKeys(ka, kb);
    }

    /** {@code versions} in this ecosystem's order, oldest first; each parsed once. */
    public List<String> sorted(java.util.Collection<String> versions) {
        record Keyed(String version, List<Object> key) {}
        List<Keyed> keyed = new ArrayList<>(versions.size());
        for (String v : versions) {
            keyed.add(new Keyed(v, key(v)));
        }
        keyed.sort((a, b) -> a.key() == null || b.key() == null
                ? (a.key() == null && b.key() == null ? a.version().compareTo(b.version()) : a.key() == null ? -1 : 1)
                : compareKeys(a.key(), b.key()));
        return keyed.stream().map(Keyed::version).toList();
    }

    /** True for a version that orders before its release (npm {@code 1.0.0-rc.1}, PyPI {@code 1.0rc1}). */
    public boolean prerelease(String version) {
        return switch (this) {
            case NPM -> version.indexOf('-') > 0;
            case PYPI -> version.toLowerCase(Locale.ROOT).matches(".*\\d(a|b|c|rc|alpha|beta|pre|preview|dev)\\.?\\d*.*");
        };
    }

    private List<Object> key(String v) {
        return this == NPM ? semverKey(v) : pep440Key(v);
    }

    /** [major, minor, patch, release?1:0, identifiers...]: a release sorts after its pre-releases. */
    private static List<Object> semverKey(String v) {
        String s = v.startsWith("v") ? v.substring(1) : v;
        int plus = s.indexOf('+');
        if (plus >= 0) {
            s = s.substring(0, plus);
        }
        int dash = s.indexOf('-');
        String core = dash < 0 ? s : s.substring(0, dash);
        String[] parts = core.split("\\.", -1);
        if (parts.length != 3) {
            return null;
        }
        List<Object> key = new ArrayList<>();
        for (String p : parts) {
            if (!p.matches("\\d{1,18}")) {
                return null;
            }
            key.add(Long.parseLong(p));
        }
        key.add(dash < 0 ? 1L : 0L);
        if (dash >= 0) {
            for (String id : s.substring(dash + 1).split("\\.", -1)) {
                key.add(id.matches("\\d{1,18}") ? (Object) Long.parseLong(id) : id);
            }
        }
        return key;
    }

    /**
     * PEP 440, without epochs' rarer spellings: [epoch, release (8 numbers), pre rank, pre number, post, dev].
     * Pre ranks: dev-only release -3, a -2, b -1, rc 0... and a final release 1.
     */
    private static List<Object> pep440Key(String v) {
        String s = v.toLowerCase(Locale.ROOT).strip();
        s = s.startsWith("v") ? s.substring(1) : s;
        int plus = s.indexOf('+');
        if (plus >= 0) {
            s = s.substring(0, plus);
        }
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                "(?:(\\d+)!)?(\\d+(?:\\.\\d+)*)(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\\d*))?"
                        + "(?:(?:-(\\d+))|(?:[-_.]?(?:post|rev|r)[-_.]?(\\d*)))?(?:[-_.]?dev[-_.]?(\\d*))?").matcher(s);
        if (!m.matches()) {
            return null;
        }
        List<Object> key = new ArrayList<>();
        key.add(number(m.group(1), 0));
        String[] release = m.group(2).split("\\.");
        for (int i = 0; i < 8; i++) {
            key.add(i < release.length ? number(release[i], 0) : 0L);
        }
        String pre = m.group(3);
        boolean post = m.group(5) != null || m.group(6) != null;
        boolean dev = m.group(7) != null || s.endsWith("dev");
        long preRank = pre == null ? (dev && !post ? -3 : 1) : switch (pre) {
            case "a", "alpha" -> -2;
            case "b", "beta" -> -1;
            default -> 0;
        };
        key.add(preRank);
        key.add(pre == null ? 0L : number(m.group(4), 0));
        key.add(post ? number(m.group(5) != null ? m.group(5) : m.group(6), 0) : -1L);
        key.add(dev ? number(m.group(7), 0) : Long.MAX_VALUE);
        return key;
    }

    private static long number(String s, long fallback) {
        return s == null || s.isEmpty() ? fallback : s.length() > 18 ? Long.MAX_VALUE : Long.parseLong(s);
    }

    private static int compareKeys(List<Object> a, List<Object> b) {
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            Object x = a.get(i);
            Object y = b.get(i);
            int c;
            if (x instanceof Long lx && y instanceof Long ly) {
                c = Long.compare(lx, ly);
            } else if (x instanceof Long) {
                c = -1;                       // numeric identifiers sort before alphanumeric ones
            } else if (y instanceof Long) {
                c = 1;
            } else {
                c = ((String) x).compareTo((String) y);
            }
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(a.size(), b.size());
    }
}
