package dev.sallyport.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyException;
import dev.sallyport.policy.PolicyLoader;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every policy shipped under examples/ must load without a single problem, as 'sallyport policy check' would. */
class ExamplePoliciesTest {

    static List<Path> examplePolicies() throws IOException {
        Path root = Path.of(System.getProperty("user.dir"));
        try (Stream<Path> files = Files.walk(root)) {
            List<Path> found = files
                    .filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/src/"))
                    .filter(p -> p.getFileName().toString().endsWith(".yaml"))
                    .sorted()
                    .toList();
            assertThat(found).as("example policies under %s", root).isNotEmpty();
            return found;
        }
    }

    @ParameterizedTest
    @MethodSource("examplePolicies")
    void examplePolicyIsValid(Path file) {
        Policy policy;
        try {
            policy = PolicyLoader.load(file);
        } catch (PolicyException e) {
            throw new AssertionError(file + " has problems:\n" + e.getMessage(), e);
        }
        assertThat(policy.rules()).as("rules of %s", file).isNotEmpty();
    }
}
