package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Fuzz target: every policy file ends in a policy that compiles, or in a {@link PolicyException} whose every
 * problem names a line and column inside the file and says what was expected on one line; never another
 * exception. Seeds: the example policies and the loader tests' shapes, in
 * {@code src/test/resources/dev/sallyport/policy/PolicyLoaderFuzzTestInputs/}.
 */
class PolicyLoaderFuzzTest {

    private static final Path BASE = Path.of("target", "fuzz-policy-base").toAbsolutePath();

    @FuzzTest
    void everyFileIsAPolicyOrLineNumberedErrors(byte[] input) {
        String yaml = new String(input, StandardCharsets.UTF_8);
        long lines = yaml.lines().count() + 1;
        try {
            Policy policy = PolicyLoader.parse(yaml, "fuzz.yaml", BASE, null);
            assertThat(PolicyEngine.compile(policy)).isNotNull();
        } catch (PolicyException e) {
            assertThat(e.problems()).isNotEmpty();
            for (PolicyProblem p : e.problems()) {
                assertThat(p.line()).as("line of %s", p).isBetween(1, (int) Math.max(1, lines));
                assertThat(p.column()).as("column of %s", p).isPositive();
                assertThat(p.toString()).as("one line").doesNotContain("\n").startsWith("fuzz.yaml:");
                assertThat(p.expected()).as("what was expected, in %s", p).isNotBlank();
            }
        }
    }
}
