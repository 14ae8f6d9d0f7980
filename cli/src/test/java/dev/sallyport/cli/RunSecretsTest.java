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
import java.util.List;
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
            // field names in any case: curl speaks HTTP/2 to the proxy, whose names are lower case
            assertThat(upstream.requests().getFirst()).containsIgnoringCase("Authorization: Bearer " + token + "\r\n");
            String log = Files.readString(audit);
            assertThat(log).contains("\"secrets\":[\"API_TOKEN\"]").doesNotContain(token);
            assertThat(run.stdout()).doesNotContain(token);
            assertThat(run.stderr()).doesNotContain(token);
        }
    }

    /**
     * Regression (issue 14 item 3): every run made new placeholders, so a token a tool saved in one run (in
     * {@code .git/config}, {@code .npmrc}) went upstream as a bare token in the next and got a 401. Placeholders now
     * come from the state folder's key: the same in every run with that folder (and the same that
     * {@code secrets env} prints); one from another state folder, or of a secret this run does not give, is refused
     * {@code secret_unknown_placeholder} and never reaches the upstream.
     */
    @Test
    void placeholdersStayTheSameFromRunToRunAndAStaleOneIsRefusedWithItsOwnReason() throws Exception {
        TestPki pki = TestPki.create();
        TestPki.Issued leaf = pki.issue("127.0.0.1");
        try (TlsTestServer upstream = TlsTestServer.start(leaf.key(), leaf.chain(), "hello from upstream")) {
            Path workspace = Files.createDirectories(dir.resolve("ws"));
            Path policy = dir.resolve("p.yaml");
            Files.writeString(policy, CliProcess.loopbackUpstreamPolicy(pki.rootPem(dir), upstream.port(), "local-api", """
                    secrets:
                      - name: API_TOKEN
                        from: env:API_TOKEN
                        hosts: [127.0.0.1]
                        headers: [Authorization]
                      - name: OTHER_TOKEN
                        from: env:OTHER_TOKEN
                        hosts: [127.0.0.1]
                        headers: [X-Other]
                    """));
            Map<String, String> stateA = Map.of("SALLYPORT_HOME", dir.resolve("state-a").toString(),
                    "API_TOKEN", "tok-api-0123456789", "OTHER_TOKEN", "tok-other-0123456789");
            String first = placeholderInside(stateA, policy, workspace, "first");
            String second = placeholderInside(stateA, policy, workspace, "second");
            assertThat(first).matches("sallyport-ph-[a-z2-7]{26}").isEqualTo(second);
            ExternalProcess.Result env = CliProcess.run(stateA, Duration.ofSeconds(60), "secrets", "env", "--config",
                    policy.toString());
            assertThat(env.stdout()).contains("API_TOKEN=" + first + "\n");

            Map<String, String> stateB = new java.util.HashMap<>(stateA);
            stateB.put("SALLYPORT_HOME", dir.resolve("state-b").toString());
            assertThat(placeholderInside(stateB, policy, workspace, "other-state")).as("another state folder")
                    .isNotEqualTo(first);
            // the token a tool saved under state A, sent in a run under state B
            assertThat(statusInside(stateB, policy, workspace, upstream.port(), "Authorization: Bearer " + first))
                    .isEqualTo("403 secret_unknown_placeholder");
            // a secret the run does not give: its placeholder of earlier runs does not work in this one
            String otherA = env.stdout().lines().filter(l -> l.startsWith("OTHER_TOKEN=")).findFirst().orElseThrow()
                    .substring("OTHER_TOKEN=".length());
            assertThat(statusInside(stateA, policy, workspace, upstream.port(), "X-Other: " + otherA,
                    "--secret", "API_TOKEN")).isEqualTo("403 secret_unknown_placeholder");
            assertThat(upstream.requests()).as("no stale token reached the upstream").isEmpty();
            assertThat(statusInside(stateA, policy, workspace, upstream.port(), "X-Other: " + otherA))
                    .as("given to the run, it works").isEqualTo("200 ");
            assertThat(upstream.requests()).singleElement().satisfies(r -> assertThat(r)
                    .containsIgnoringCase("X-Other: tok-other-0123456789\r\n"));
        }
    }

    /** The placeholder {@code API_TOKEN} holds inside a run with {@code env}. */
    private String placeholderInside(Map<String, String> env, Path policy, Path workspace, String name) throws Exception {
        ExternalProcess.Result run = CliProcess.run(env, Duration.ofSeconds(180), "run", "--policy", policy.toString(),
                "--workdir", workspace.toString(), "--audit", dir.resolve(name + ".jsonl").toString(), "--", "sh",
                "-c", "printf %s \"$API_TOKEN\" > " + name + ".txt");
        assertThat(run.exit()).as(run.stderr()).isZero();
        return Files.readString(workspace.resolve(name + ".txt"));
    }

    /** {@code STATUS REASON} of a request with {@code header} from inside a run ({@code flags} added to it). */
    private String statusInside(Map<String, String> env, Path policy, Path workspace, int port, String header,
                                String... flags) throws Exception {
        List<String> args = new java.util.ArrayList<>(List.of("run", "--policy", policy.toString(), "--workdir",
                workspace.toString(), "--audit", dir.resolve("status.jsonl").toString()));
        args.addAll(List.of(flags));
        args.addAll(List.of("--", "sh", "-c", "curl -sS --noproxy '' -o /dev/null -D headers.txt -H '" + header
                + "' https://127.0.0.1:" + port + "/api"));
        ExternalProcess.Result run = CliProcess.run(env, Duration.ofSeconds(180), args.toArray(String[]::new));
        assertThat(run.exit()).as(run.stderr()).isZero();
        String headers = Files.readString(workspace.resolve("headers.txt"));
        String status = headers.lines().filter(l -> l.startsWith("HTTP/")).reduce((connect, last) -> last)
                .orElseThrow().split(" ")[1];     // the CONNECT's 200 comes first
        String reason = headers.lines().filter(l -> l.toLowerCase(java.util.Locale.ROOT).startsWith("x-sallyport-reason:"))
                .map(l -> l.substring(l.indexOf(':') + 1).strip()).findFirst().orElse("");
        return status + " " + reason;
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
