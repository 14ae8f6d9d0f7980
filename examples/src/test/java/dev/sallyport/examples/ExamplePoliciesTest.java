package dev.sallyport.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.policy.PolicyException;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.policy.Verdict;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Every policy shipped under examples/ must load without a single problem, as 'sallyport policy check' would. */
class ExamplePoliciesTest {

    static List<Path> examplePolicies() throws IOException {
        Path root = Path.of(System.getProperty("user.dir"));
        try (Stream<Path> files = Files.walk(root)) {
            List<Path> found = files
                    .filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/src/"))
                    .filter(p -> !p.toString().contains("/kubernetes/"))   // manifests: KubernetesManifestsTest
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

    /** npm asks for scoped packages as {@code /@scope%2fname}: the registry rules must read them, and only read. */
    @ParameterizedTest
    @ValueSource(strings = {"agent/policy.yaml", "ci-runner/policy.yaml"})
    void theRegistryRuleReadsNpmScopedPackagesAndNothingElse(String example) throws PolicyException {
        Path file = Path.of(System.getProperty("user.dir")).resolve(example);
        PolicyEngine engine = PolicyEngine.compile(PolicyLoader.load(file));
        for (String path : List.of("/@types%2fnode", "/@babel%2Fcore", "/@types/node/-/node-20.0.0.tgz")) {
            assertThat(engine.onRequest("registry.example.com", 443, "GET", path, null).verdict()).as(path)
                    .isEqualTo(Verdict.ALLOW);
        }
        assertThat(engine.onRequest("registry.example.com", 443, "PUT", "/@types%2fnode", null).verdict())
                .isEqualTo(Verdict.DENY);
        assertThat(engine.onRequest("registry.example.com", 443, "GET", "/@types%2f..%2f..%2fx", null).verdict())
                .isEqualTo(Verdict.DENY);
    }

    /** The shared CI proxy: each policy name reaches its own hosts; a client with no identity reaches nothing. */
    @Test
    void theSharedCiPolicyGivesEachClientItsOwnRulesAndAnonymousNothing() throws PolicyException {
        Path file = Path.of(System.getProperty("user.dir")).resolve("ci-runner/shared-policy.yaml");
        Policy policy = PolicyLoader.load(file);
        PolicyEngine engine = PolicyEngine.compile(policy);
        assertThat(engine.onRequest("registry.example.com", 443, "GET", "/pkg", "ci").verdict())
                .isEqualTo(Verdict.ALLOW);
        assertThat(engine.onRequest("deploy.example.com", 443, "POST", "/", "ci").verdict()).isEqualTo(Verdict.DENY);
        assertThat(engine.onRequest("deploy.example.com", 443, "POST", "/", "release").verdict())
                .isEqualTo(Verdict.ALLOW);
        assertThat(engine.onConnect("registry.example.com", 443, "anonymous").verdict()).isEqualTo(Verdict.DENY);
        assertThat(policy.secrets().getFirst().usableBy("release")).isTrue();
        assertThat(policy.secrets().getFirst().usableBy("ci")).isFalse();
    }
}
