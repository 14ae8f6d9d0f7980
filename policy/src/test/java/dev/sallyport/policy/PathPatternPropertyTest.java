package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The offset-walking glob matcher must agree with an obviously correct recursive one. */
class PathPatternPropertyTest {

    private static final String[] PATTERN_SEGMENTS = {"a", "b", "*", "**"};
    private static final String[] PATH_SEGMENTS = {"a", "b", "c"};

    @Test
    void agreesWithARecursiveMatcher() {
        Random random = new Random(7);
        for (int n = 0; n < 20_000; n++) {
            List<String> pattern = random(random, PATTERN_SEGMENTS, 5);
            List<String> path = random(random, PATH_SEGMENTS, 6);
            String patternText = "/" + String.join("/", pattern);
            String pathText = "/" + String.join("/", path);
            boolean expected = reference(pattern, 0, path, 0);
            assertThat(PathPattern.parse(patternText).matches(pathText)).as("%s on %s", patternText, pathText)
                    .isEqualTo(expected);
        }
    }

    private static List<String> random(Random random, String[] alphabet, int maxLength) {
        int length = random.nextInt(maxLength + 1);
        List<String> out = new ArrayList<>();
        for (int i = 0; i < length; i++) {
            out.add(alphabet[random.nextInt(alphabet.length)]);
        }
        return out;
    }

    private static boolean reference(List<String> pattern, int pi, List<String> path, int si) {
        if (pi == pattern.size()) {
            return si == path.size();
        }
        String p = pattern.get(pi);
        if (p.equals("**")) {
            for (int k = si; k <= path.size(); k++) {
                if (reference(pattern, pi + 1, path, k)) {
                    return true;
                }
            }
            return false;
        }
        if (si == path.size()) {
            return false;
        }
        return (p.equals("*") || p.equals(path.get(si))) && reference(pattern, pi + 1, path, si + 1);
    }
}
