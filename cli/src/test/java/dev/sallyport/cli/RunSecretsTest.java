package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.TlsTestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sallyport run} with a secret, end to end: the real value lives only in the CLI's environment, the
 * process sandbox sees the placeholder (in {@code env} and in what curl sends), and the loopback upstream
 * receives the real value, injected by the run's own proxy.
 */
class RunSecretsTest {

    @TempDir
    Path dir;

    @Test
    void sandboxHoldsOnlyThePlaceholderAndTheUpstreamGetsTheRealToken() throws Exception {
        String token = "tok_" + HexFormat.of().formatHex(SecureRandom.getInstanceStrong().generateSeed(16));
        TestPki pki = TestPki.create();
        TestPki.Issued leaf = pki.issue("127.0.0.1");
        try (TlsTestServer upstream = TlsTestServer.start(leaf.key(), leaf.chain(), "hello from upstream")) {
            Path workspace = Files.createDirectories(dir.resolve("ws"));
            Path audit = dir.resolve("audit.jsonl");
            Path policy = dir.resolve("p.yaml");
            Files.writeString(policy, CliProcess.loopbackUpstreamPolicy(pki.rootPem(dir), upstream.port(), "local-api", """
                    secrets:
                      - name: API_TOKEN
                        from: env:API_TOKEN
                        hosts: [127.0.0.1]
                        headers: [Authorization]
                    """));
            String script = String.join("; ",
                    "curl -sS --noproxy '' -H \"Authorization: Bearer $API_TOKEN\" https://127.0.0.1:"
                            + upstream.port() + "/api > fetched.txt",
                    "env > env.txt");
            ExternalProcess.Result run = CliProcess.run(Map.of("SALLYPORT_HOME", dir.resolve("state").toString(),
                            "API_TOKEN", token), Duration.ofSeconds(180), "run", "--policy", policy.toString(),
                    "--workdir", workspace.toString(), "--audit", audit.toString(), "--", "sh", "-c", script);
            assertThat(run.exit()).as(run.stderr()).isZero();
            assertThat(Files.readString(workspace.resolve("fetched.txt"))).isEqualTo("hello from upstream");
            String env = Files.readString(workspace.resolve("env.txt"));
            assertThat(env).containsPattern("(?m)^API_TOKEN=sallyport-ph-[a-z2-7]{26}$").doesNotContain(token);
            assertThat(upstream.requests()).hasSize(1);
            assertThat(upstream.requests().getFirst()).contains("Authorization: Bearer " + token + "\r\n");
            String log = Files.readString(audit);
            assertThat(log).contains("\"secrets\":[\"API_TOKEN\"]").doesNotContain(token);
            assertThat(run.stdout()).doesNotContain(token);
            assertThat(run.stderr()).doesNotContain(token);
        }
    }

    @Test
    void aSecretThatCannotBeReadIsAConfigurationErrorWithOneLinePerProblem() throws Exception {
        Path policy = dir.resolve("p.yaml");
        Files.writeString(policy, """
                rules: []
                secrets:
                  - name: MISSING_ONE
                    from: env:SALLYPORT_TEST_UNSET_VARIABLE_1
                    hosts: [api.example.com]
                    headers: [Authorization]
                  - name: MISSING_TWO
                    from: file:%s
                    hosts: [api.example.com]
                    headers: [X-Api-Key]
                """.formatted(dir.resolve("absent")));
        CliRun run = CliRun.of("run", "--policy", policy.toString(), "--workdir", dir.toString(),
                "--audit", dir.resolve("audit.jsonl").toString(), "--", "true");
        assertThat(run.exit()).as(run.err()).isEqualTo(2);
        assertThat(run.err().lines().filter(l -> l.startsWith("sallyport: secrets[")).toList()).hasSize(2)
                .anySatisfy(l -> assertThat(l).contains("MISSING_ONE").contains("SALLYPORT_TEST_UNSET_VARIABLE_1"))
                .anySatisfy(l -> assertThat(l).contains("MISSING_TWO").contains("absent"));
    }
}
