package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Regression (issue 11 item 9): double-encoded dot segments ({@code /public/%252e%252e/private/x}) reached a
 * path-restricted host, because some backends decode twice. Differential: many spellings of paths that climb
 * out of {@code /public/} are sent to the engine (rule: {@code /public/**} only) and to a model of the most
 * lenient backend; whatever the engine lets through, that backend must read inside {@code /public/}.
 *
 * <p>The lenient backend: cuts the raw query, decodes {@code %XX} (any case) and {@code %uXXXX} again and
 * again until nothing changes, reads overlong UTF-8 as the ASCII it encodes, stops at a decoded {@code ?},
 * {@code #} or NUL, treats {@code \} as {@code /}, drops {@code ;parameters} from each segment (as Java
 * servlet containers do), resolves dot segments (clamped at the root) and collapses {@code //}.
 */
class PathNormalizerDifferentialTest {

    private static final PolicyEngine ENGINE;

    static {
        try {
            ENGINE = PolicyEngine.compile(PolicyLoader.parse("""
                    rules:
                      - name: public
                        hosts: [files.example.com]
                        ports: [80]
                        paths: ["/public/**"]
                    """, "differential.yaml"));
        } catch (PolicyException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Spellings of one '.', from plain to triple encoding, hex digits encoded, overlong UTF-8, IIS %u. */
    static final List<String> DOT = List.of(".", "%2e", "%2E", "%252e", "%252E", "%25252e", "%2525252E",
            "%25%32%65", "%25%32%45", "%25%33%32%65", "%%32%65", "%c0%ae", "%C0%AE", "%c0%2e", "%25c0%25ae",
            "%e0%80%ae", "%f0%80%80%ae", "%u002e", "%U002E", "%25u002e", "%2525u002e", "%uff0e");

    /** Spellings of one '/' (and of '\', which lenient backends treat as one). */
    static final List<String> SLASH = List.of("/", "%2f", "%2F", "%252f", "%252F", "%25252f", "%25%32%66",
            "\\", "%5c", "%5C", "%255c", "%255C", "%25255c", "%c0%af", "%C0%AF", "%25c0%25af", "%c1%9c",
            "%e0%80%af", "%u002f", "%u005c", "%25u002f", "%25u005c");

    /** What may follow a '..' inside its segment: parameters, NUL, query and fragment, plain and encoded. */
    static final List<String> TAIL = List.of("", ";", ";x=1", "%3b", "%3B", "%253b", "%25253b", "%00", "%2500",
            "%3f", "%253f", "%23", "%2523", "%09", "%2509", "%20", "%2520");

    /** Spellings of an ordinary path character: they must not make a harmless path look harmful or refused. */
    static final List<String> LETTER = List.of("a", "%61", "%2561", "%41", "%2541", "%20", "%2520", "-", "%2d",
            "%252d", "~", "%7e");

    @Test
    void nothingTheEngineAllowsIsReadOutsideThePublicTreeByALenientBackend() {
        List<String> raws = new ArrayList<>();
        for (String d1 : DOT) {
            for (String d2 : DOT) {
                for (String s : SLASH) {
                    raws.add("/public/" + d1 + d2 + s + "private/x");
                    raws.add("/public/a" + s + d1 + d2 + "/" + d1 + d2 + "/private/x");
                    raws.add("/public/a/b" + s + d1 + d2 + s + "c"); // climbs one level, stays inside
                }
                for (String t : TAIL) {
                    raws.add("/public/" + d1 + d2 + t + "/private/x");
                    raws.add("/public/x/" + d1 + d2 + t + "/" + d1 + d2 + "/private");
                }
            }
        }
        Random random = new Random(9);
        for (int i = 0; i < 60_000; i++) {
            raws.add(randomClimb(random));
        }
        int attacks = 0;
        int allowed = 0;
        Set<String> attackKinds = new TreeSet<>();
        for (String raw : raws) {
            String read = LenientBackend.read(raw);
            boolean outside = !inPublic(read);
            if (outside) {
                attacks++;
                attackKinds.add(kind(raw));
            }
            if (allows(raw)) {
                allowed++;
                assertThat(read).as("engine allowed %s, a lenient backend reads %s", raw, read)
                        .satisfies(r -> assertThat(inPublic(r)).isTrue());
                List<String> readings = PathNormalizer.readings(raw);
                assertThat(readings.stream().map(LenientBackend::read).toList())
                        .as("what a lenient backend reads of %s is one of the readings the engine decided on, %s",
                                raw, readings).contains(read);
            }
        }
        // the generator really attacks, and the defence refuses attacks, not everything
        assertThat(attacks).as("spellings a lenient backend reads outside /public").isGreaterThan(50_000);
        assertThat(attackKinds).contains("double", "triple", "overlong", "%u", "backslash", "params");
        assertThat(allowed).as("spellings the engine allows (all read inside /public)").isGreaterThan(200);
    }

    @Test
    void harmlessSpellingsInsideThePublicTreeStayAllowed() {
        Random random = new Random(21);
        for (int i = 0; i < 5_000; i++) {
            StringBuilder sb = new StringBuilder("/public");
            int segments = 1 + random.nextInt(4);
            for (int s = 0; s < segments; s++) {
                sb.append('/');
                for (int c = 1 + random.nextInt(4); c > 0; c--) {
                    sb.append(flipCase(LETTER.get(random.nextInt(LETTER.size())), random));
                }
            }
            String raw = sb.toString();
            assertThat(allows(raw)).as(raw).isTrue();
            assertThat(inPublic(LenientBackend.read(raw))).as(raw).isTrue();
        }
        for (String raw : List.of("/public/a/./b", "/public/a/%2e/b", "/public/a/b/../c", "/public/a/%2e%2e/c",
                "/public/100%25", "/public/a%2520b", "/public/%2541", "/public/a;v=2", "/public/caf%C3%A9")) {
            assertThat(allows(raw)).as(raw).isTrue();
        }
    }

    /**
     * A deny rule in front of an allow rule: what a parameter-dropping or query-cutting backend reads as the
     * denied tree must be denied, although the normal form names another segment ({@code secret;x},
     * {@code secret%3F}).
     */
    @Test
    void aDenyRuleIsNotEvadedByParametersOrAnEscapedQuery() {
        PolicyEngine engine = Engines.of(Engines.DENY_FIRST);
        List<String> tails = List.of(";", ";x=1", "%3b", "%3B;a", "%3f", "%3F", "%23", "%3fx", "%23x", ";%3f");
        Random random = new Random(5);
        int reads = 0;
        for (String tail : tails) {
            for (String rest : List.of("", "/", "/y", "/../y", "/../../public/y", "/a/../y")) {
                for (String prefix : List.of("/public/secret", "/public/./secret", "/public/x/../secret",
                        "/public/%73ecret", "/public//secret")) {
                    String raw = prefix + flipCase(tail, random) + rest;
                    String read = LenientBackend.read(raw);
                    boolean secret = read.equals("/public/secret") || read.startsWith("/public/secret/");
                    if (secret) {
                        reads++;
                    }
                    Decision d = engine.onRequest("files.example.com", 80, "GET", raw, null);
                    if (d.verdict() == Verdict.ALLOW) {
                        assertThat(secret).as("engine allowed %s, a lenient backend reads %s", raw, read).isFalse();
                    }
                }
            }
        }
        assertThat(reads).as("spellings a lenient backend reads inside /public/secret").isGreaterThan(100);
        assertThat(engine.onRequest("files.example.com", 80, "GET", "/public/other;v=2", null).verdict())
                .isEqualTo(Verdict.ALLOW);
        assertThat(engine.onRequest("files.example.com", 80, "GET", "/public/secret;v=2", null).reason())
                .isEqualTo(Reasons.DENIED);
    }

    @Test
    void theIssuesSpellingsAreRefused() {
        for (String raw : List.of("/public/%252e%252e/private/x", "/public/%252E%252E/private/x",
                "/public/%252e./private/x", "/public/.%252e/private/x", "/public/%25252e%25252e/private/x",
                "/public/%252e%252e%252fprivate/x", "/public/..%252fprivate/x", "/public/..%255cprivate/x",
                "/public/%25%32%65%25%32%65/private/x", "/public/%c0%ae%c0%ae/private/x",
                "/public/%25c0%25ae%25c0%25ae/private/x", "/public/%u002e%u002e/private/x",
                "/public/%25u002e%25u002e/private/x", "/public/%e0%80%ae%e0%80%ae/private/x",
                "/public/..%253b/private/x", "/public/..%2500/private/x")) {
            Decision d = ENGINE.onRequest("files.example.com", 80, "GET", raw, null);
            assertThat(d.verdict()).as(raw).isEqualTo(Verdict.DENY);
            assertThat(d.reason()).as(raw).isIn(Reasons.INVALID_PATH, Reasons.PATH_NOT_ALLOWED);
        }
    }

    private static boolean allows(String raw) {
        return ENGINE.onRequest("files.example.com", 80, "GET", raw, null).verdict() == Verdict.ALLOW;
    }

    private static boolean inPublic(String path) {
        return path.equals("/public") || path.startsWith("/public/");
    }

    /** A path that climbs out of /public in a random mix of spellings. */
    private static String randomClimb(Random random) {
        StringBuilder sb = new StringBuilder("/public");
        int depth = random.nextInt(3);
        for (int i = 0; i < depth; i++) {
            sb.append(pick(SLASH, random)).append(pick(LETTER, random));
        }
        for (int i = 0; i <= depth; i++) {
            sb.append(i == 0 && random.nextBoolean() ? "/" : pick(SLASH, random));
            sb.append(pick(DOT, random)).append(pick(DOT, random));
            if (random.nextInt(4) == 0) {
                sb.append(pick(TAIL, random));
            }
        }
        sb.append(pick(SLASH, random)).append("private").append(random.nextBoolean() ? "/x" : "");
        return sb.toString();
    }

    private static String pick(List<String> options, Random random) {
        return flipCase(options.get(random.nextInt(options.size())), random);
    }

    /** The same escape with each hex digit's case chosen at random. */
    private static String flipCase(String s, Random random) {
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            sb.append(Character.isLetter(c) && random.nextBoolean() ? Character.toUpperCase(c) : c);
        }
        return sb.toString();
    }

    private static String kind(String raw) {
        String lower = raw.toLowerCase(Locale.ROOT);
        if (lower.contains("%2525")) {
            return "triple";
        }
        if (lower.contains("%c0") || lower.contains("%c1") || lower.contains("%e0") || lower.contains("%f0")) {
            return "overlong";
        }
        if (lower.contains("%u")) {
            return "%u";
        }
        if (lower.contains("%25")) {
            return "double";
        }
        if (lower.contains("\\") || lower.contains("%5c")) {
            return "backslash";
        }
        if (lower.contains(";") || lower.contains("%3b")) {
            return "params";
        }
        return "single";
    }

    /** The most lenient reading of a request path a backend is known to make. */
    static final class LenientBackend {

        static String read(String raw) {
            int q = raw.indexOf('?');
            String p = q < 0 ? raw : raw.substring(0, q);
            for (int round = 0; round < 10; round++) {
                String next = overlong(decodeOnce(p));
                if (next.equals(p)) {
                    break;
                }
                p = next;
            }
            p = cutAtFirst(p, "?#\u0000");
            p = p.replace('\\', '/');
            return resolve(p);
        }

        private static String decodeOnce(String s) {
            StringBuilder sb = new StringBuilder(s.length());
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == '%' && i + 1 < s.length() && (s.charAt(i + 1) == 'u' || s.charAt(i + 1) == 'U')
                        && hex4(s, i + 2) >= 0) {
                    int v = hex4(s, i + 2);
                    sb.append(v == 0xff0e ? '.' : (char) v); // fullwidth full stop, read as '.' by NFKC servers
                    i += 5;
                } else if (c == '%' && i + 2 < s.length() && hex(s.charAt(i + 1)) >= 0 && hex(s.charAt(i + 2)) >= 0) {
                    sb.append((char) ((hex(s.charAt(i + 1)) << 4) | hex(s.charAt(i + 2))));
                    i += 2;
                } else {
                    sb.append(c);
                }
            }
            return sb.toString();
        }

        /** Overlong UTF-8 sequences read as the ASCII character they encode; other bytes unchanged. */
        private static String overlong(String s) {
            StringBuilder sb = new StringBuilder(s.length());
            for (int i = 0; i < s.length(); i++) {
                int b = s.charAt(i);
                if ((b == 0xC0 || b == 0xC1) && i + 1 < s.length() && (s.charAt(i + 1) & 0xC0) == 0x80) {
                    sb.append((char) (((b & 0x1F) << 6) | (s.charAt(i + 1) & 0x3F)));
                    i += 1;
                } else if (b == 0xE0 && i + 2 < s.length() && s.charAt(i + 1) >= 0x80 && s.charAt(i + 1) <= 0x81
                        && (s.charAt(i + 2) & 0xC0) == 0x80) {
                    sb.append((char) (((s.charAt(i + 1) & 0x3F) << 6) | (s.charAt(i + 2) & 0x3F)));
                    i += 2;
                } else if (b == 0xF0 && i + 3 < s.length() && s.charAt(i + 1) == 0x80 && s.charAt(i + 2) >= 0x80
                        && s.charAt(i + 2) <= 0x81 && (s.charAt(i + 3) & 0xC0) == 0x80) {
                    sb.append((char) (((s.charAt(i + 2) & 0x3F) << 6) | (s.charAt(i + 3) & 0x3F)));
                    i += 3;
                } else {
                    sb.append((char) b);
                }
            }
            return sb.toString();
        }

        private static String cutAtFirst(String s, String stops) {
            for (int i = 0; i < s.length(); i++) {
                if (stops.indexOf(s.charAt(i)) >= 0) {
                    return s.substring(0, i);
                }
            }
            return s;
        }

        private static String resolve(String p) {
            List<String> out = new ArrayList<>();
            String[] segments = p.split("/", -1);
            boolean trailing = false;
            for (int i = 1; i < segments.length; i++) {
                String seg = segments[i];
                int semi = seg.indexOf(';');
                if (semi >= 0) {
                    seg = seg.substring(0, semi);
                }
                trailing = seg.isEmpty() || seg.equals(".") || seg.equals("..");
                if (seg.equals("..")) {
                    if (!out.isEmpty()) {
                        out.removeLast();
                    }
                } else if (!seg.isEmpty() && !seg.equals(".")) {
                    out.add(seg);
                }
            }
            String joined = "/" + String.join("/", out);
            return trailing && !out.isEmpty() ? joined + "/" : joined;
        }

        private static int hex4(String s, int at) {
            if (at + 4 > s.length()) {
                return -1;
            }
            int v = 0;
            for (int i = at; i < at + 4; i++) {
                int h = hex(s.charAt(i));
                if (h < 0) {
                    return -1;
                }
                v = (v << 4) | h;
            }
            return v;
        }

        private static int hex(char c) {
            return IpAddress.hex(c);
        }
    }
}
