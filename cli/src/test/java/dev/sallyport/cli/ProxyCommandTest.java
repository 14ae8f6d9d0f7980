package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.sallyport.testing.ExternalProcess;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sallyport proxy} as a user runs it: its own JVM, real sockets, stopped with SIGTERM. */
class ProxyCommandTest {

    private static final Pattern LISTENING = Pattern.compile("proxy listening on 127\\.0\\.0\\.1:(\\d+), admin on 127\\.0\\.0\\.1:(\\d+)");

    @TempDir
    Path dir;

    @Test
    void startsAnswersHealthDeniesUnlistedAndStopsOnSigterm() throws Exception {
        Path policy = dir.resolve("p.yaml");
        Path audit = dir.resolve("audit.jsonl");
        Files.writeString(policy, """
                proxy:
                  listen: 127.0.0.1:0
                  admin: 127.0.0.1:0
                audit: {path: %s}
                rules:
                  - name: only-this
                    hosts: [allowed.example.com]
                """.formatted(audit));
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), Main.class.getName(), "proxy", "--config", policy.toString()));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().put("SALLYPORT_HOME", dir.resolve("state").toString());
        Process process = builder.start();
        try {
            BufferedReader stderr = new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8));
            Matcher m = CompletableFuture.supplyAsync(() -> {
                try {
                    for (String line; (line = stderr.readLine()) != null; ) {
                        Matcher found = LISTENING.matcher(line);
                        if (found.find()) {
                            return found;
                        }
                    }
                    return null;
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).get(60, TimeUnit.SECONDS);
            assertThat(m).as("the proxy announces its addresses").isNotNull();
            int port = Integer.parseInt(m.group(1));
            int admin = Integer.parseInt(m.group(2));

            HttpClient plain = HttpClient.newHttpClient();
            HttpResponse<String> health = plain.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin + "/healthz")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);

            ExternalProcess.Result curl = ExternalProcess.run(Duration.ofSeconds(20), List.of("curl", "-sS", "-i",
                    "-x", "http://127.0.0.1:" + port, "https://denied.example.net/secret?token=abc"), null);
            assertThat(curl.stdout() + curl.stderr()).contains("403");

            process.destroy(); // SIGTERM
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("stops on SIGTERM").isTrue();
            String log = Files.readString(audit);
            assertThat(log).contains("\"host\":\"denied.example.net\"", "\"decision\":\"deny\"", "\"reason\":\"no_matching_rule\"")
                    .doesNotContain("token=abc");
        } finally {
            process.destroyForcibly();
        }
    }

    @Test
    void badPolicyIsAConfigurationErrorWithLines() throws Exception {
        Path policy = dir.resolve("bad.yaml");
        Files.writeString(policy, "rules:\n  - name: x\n    hosts: ['*']\n");
        CliRun run = CliRun.of("proxy", "--config", policy.toString());
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains(policy + ":3:");
    }

    @Test
    void aPolicyThatIsNotARegularFileIsRefusedInOneLine() {
        // a pipe (--config <(...)) or a device can be read once; the proxy reads its policy again to follow edits
        CliRun run = CliRun.of("proxy", "--config", "/dev/null");
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains("--config: /dev/null is not a regular file").hasLineCount(1);
    }
}
