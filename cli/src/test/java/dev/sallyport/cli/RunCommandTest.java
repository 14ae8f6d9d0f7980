package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.TlsTestServer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sallyport run} end to end: its own proxy with an ephemeral CA, the real process sandbox (bubblewrap,
 * seccomp, Landlock), a real HTTPS upstream on loopback, and curl inside the sandbox.
 */
class RunCommandTest {

    @TempDir
    Path dir;

    @Test
    void allowedHttpsWorksDeniedIsRefusedAndAuditedWorkspaceWritableExitStatusPasses() throws Exception {
        TestPki pki = TestPki.create();
        TestPki.Issued leaf = pki.issue("127.0.0.1");
        try (TlsTestServer upstream = TlsTestServer.start(leaf.key(), leaf.chain(), "hello from upstream")) {
            Path workspace = Files.createDirectories(dir.resolve("ws"));
            Path audit = dir.resolve("audit.jsonl");
            Path policy = dir.resolve("p.yaml");
            Files.writeString(policy, CliProcess.loopbackUpstreamPolicy(pki.rootPem(dir), upstream.port(), "local-upstream", ""));
            String script = String.join("; ",
                    "curl -sS --noproxy '' https://127.0.0.1:" + upstream.port() + "/ok > fetched.txt",
                    "curl -sS --noproxy '' -o /dev/null -w '%{http_connect}' https://denied.example.net/ > denied.txt",
                    "exit 7");
            ExternalProcess.Result run = CliProcess.run(Map.of("SALLYPORT_HOME", dir.resolve("state").toString()),
                    Duration.ofSeconds(180), "run", "--policy", policy.toString(), "--workdir", workspace.toString(),
                    "--audit", audit.toString(), "--", "sh", "-c", script);
            assertThat(run.exit()).as(run.stderr()).isEqualTo(7);
            assertThat(Files.readString(workspace.resolve("fetched.txt"))).isEqualTo("hello from upstream");
            assertThat(Files.readString(workspace.resolve("denied.txt"))).isEqualTo("403");
            String log = Files.readString(audit);
            assertThat(log).contains("\"rule\":\"local-upstream\"", "\"status\":200")
                    .contains("\"host\":\"denied.example.net\"", "\"reason\":\"no_matching_rule\"");
            assertThat(dir.resolve("state")).satisfiesAnyOf(
                    p -> assertThat(p).doesNotExist(),
                    p -> assertThat(p.resolve("ca")).doesNotExist());
        }
    }

    @Test
    void unknownBackendAndSecretAreUsageErrors() throws Exception {
        CliRun backend = CliRun.of("run", "--backend", "qemu", "--workdir", dir.toString(), "--", "true");
        assertThat(backend.exit()).isEqualTo(2);
        assertThat(backend.err()).contains("--backend: 'qemu' (expected: process or nerdctl)");

        CliRun image = CliRun.of("run", "--backend", "nerdctl", "--workdir", dir.toString(), "--", "true");
        assertThat(image.exit()).isEqualTo(2);
        assertThat(image.err()).contains("--image");
    }

    @Test
    void aPolicyThatIsNotARegularFileIsRefusedInOneLine() {
        // the run's proxy reads its policy again to follow edits: a pipe or device would hang it at start
        CliRun run = CliRun.of("run", "--policy", "/dev/null", "--workdir", dir.toString(), "--", "true");
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains("--policy: /dev/null is not a regular file").hasLineCount(1);
    }

    @Test
    void nerdctlDryRunPrintsEveryHostCommandAndRunsNone() throws Exception {
        Path workspace = Files.createDirectories(dir.resolve("ws"));
        ExternalProcess.Result run = CliProcess.run(Map.of("SALLYPORT_HOME", dir.resolve("state").toString()),
                Duration.ofSeconds(120), "run", "--backend", "nerdctl", "--runtime", "kata", "--image", "img.example/tools:1",
                "--workdir", workspace.toString(), "--dry-run", "--", "make", "test");
        assertThat(run.exit()).as(run.stderr()).isZero();
        assertThat(run.stdout())
                .contains("nerdctl network create")
                .contains("nft ")
                .contains("--runtime io.containerd.kata.v2")
                .contains("--cap-drop ALL")
                .contains("img.example/tools:1");
        ExternalProcess.Result tables = ExternalProcess.run(Duration.ofSeconds(20), java.util.List.of("nft", "list", "tables"), null);
        assertThat(tables.stdout()).as("a dry run creates no nftables table").doesNotContain("sallyport_");
    }
}
