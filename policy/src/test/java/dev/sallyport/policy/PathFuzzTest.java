package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.List;

/**
 * Fuzz target, differential: a deny rule for {@code /public/secret/**} before an allow rule for {@code /public/**}.
 * Whatever path the engine allows, neither the most lenient backend known ({@link
 * PathNormalizerDifferentialTest.LenientBackend}: decodes again and again, overlong UTF-8, {@code %u}, backslash,
 * parameters, a decoded query or NUL) nor a plain one (decodes once, resolves dot segments) reads inside the
 * denied tree; and the engine never throws, and the normal form is a fixed point. Kept inputs:
 * {@code src/test/resources/dev/sallyport/policy/PathFuzzTestInputs/}.
 */
class PathFuzzTest {

    private static final PolicyEngine ENGINE = Engines.of(Engines.DENY_FIRST);

    @FuzzTest
    @DictionaryEntries({"secret", "%25", "%2e", "%2f", "%5c", "%3b", "%3f", "%23", "%00", "%c0%ae", "%u002e", "..",
            ";", "/public/", "%73", "%2573", "%65", "%2565"})
    void aDeniedTreeIsNeverReadBehindAnAllowedPath(FuzzedDataProvider data) {
        String tail = data.consumeRemainingAsString();
        for (String raw : List.of("/public/" + tail, "/" + tail)) {
            Decision d = ENGINE.onRequest("files.example.com", 80, "GET", raw, null);
            if (d.verdict() != Verdict.ALLOW) {
                continue;
            }
            for (String read : List.of(PathNormalizerDifferentialTest.LenientBackend.read(raw), plainRead(raw))) {
                assertThat(secret(read)).as("engine allowed %s; a backend reads %s", raw, read).isFalse();
            }
            String normal = PathNormalizer.normalize(raw);
            assertThat(PathNormalizer.normalize(normal)).as("normal form of %s is a fixed point", raw).isEqualTo(normal);
        }
    }

    private static boolean secret(String path) {
        return path.equals("/public/secret") || path.startsWith("/public/secret/");
    }

    /** A backend that decodes {@code %XX} once (bytes as Latin-1) and resolves dot segments, clamped at the root. */
    private static String plainRead(String raw) {
        int q = raw.indexOf('?');
        String p = q < 0 ? raw : raw.substring(0, q);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < p.length(); i++) {
            char c = p.charAt(i);
            int hi = i + 2 < p.length() ? IpAddress.hex(p.charAt(i + 1)) : -1;
            int lo = i + 2 < p.length() ? IpAddress.hex(p.charAt(i + 2)) : -1;
            if (c == '%' && hi >= 0 && lo >= 0) {
                sb.append((char) (hi << 4 | lo));
                i += 2;
            } else {
                sb.append(c);
            }
        }
        java.util.ArrayDeque<String> out = new java.util.ArrayDeque<>();
        String[] segments = sb.toString().split("/", -1);
        for (int i = 1; i < segments.length; i++) {
            switch (segments[i]) {
                case "", "." -> { }
                case ".." -> out.pollLast();
                default -> out.addLast(segments[i]);
            }
        }
        return "/" + String.join("/", out);
    }
}
