package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import dev.sallyport.testing.ExternalProcess;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Injected fault: the CA key cannot be read when the proxy starts (as root a mode change does not stop a read, so
 * the key is made unreadable by what it is instead: a FIFO no one writes, a folder, an empty file, a certificate).
 * The proxy, its own JVM, exits with one line naming the file and what was expected; it neither hangs, nor starts
 * without interception, nor makes a new CA over the one that is there.
 */
class CaKeyUnreadableTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    @TempDir
    Path dir;

    static Stream<Arguments> keys() {
        return Stream.of(
                Arguments.of("fifo", "is not a regular file (expected: a PEM file)"),
                Arguments.of("folder", "is a directory (expected: a PEM file)"),
                Arguments.of("empty", "(expected: an unencrypted PEM private key"),
                Arguments.of("certificate", "(expected: an unencrypted PEM private key"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("keys")
    void theStateFolderKeyUnreadableEndsTheStartInOneLineAndMakesNoNewCa(String kind, String expected)
            throws Exception {
        Path state = dir.resolve("state");
        Path ca = state.resolve("ca");
        ExternalProcess.Result init = CliProcess.run(Map.of("SALLYPORT_HOME", state.toString()), TIMEOUT, "ca",
                "init");
        assertThat(init.exit()).as(init.stderr()).isZero();
        Path key = ca.resolve("ca-key.pem");
        Path cert = ca.resolve("ca.pem");
        byte[] certBefore = Files.readAllBytes(cert);
        spoil(key, cert, kind);

        ExternalProcess.Result run = CliProcess.run(Map.of("SALLYPORT_HOME", state.toString()), TIMEOUT, "proxy",
                "--config", policy("").toString());

        assertThat(run.timedOut()).as("the start neither hangs nor serves: %s", run.stderr()).isFalse();
        assertThat(run.exit()).as(run.stderr()).isEqualTo(1);
        assertThat(errorLines(run)).as("one line naming the key and what was expected")
                .singleElement().asString().contains("CA key " + key + ": ", expected);
        assertThat(run.stderr()).doesNotContain("proxy listening");
        assertThat(Files.readAllBytes(cert)).as("the CA certificate is left as it was").isEqualTo(certBefore);
        try (Stream<Path> files = Files.list(ca)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("ca.pem", "ca-key.pem");
        }
    }

    @Test
    void aPolicyNamingAFifoAsItsKeyEndsTheStartInOneLine() throws Exception {
        Path state = dir.resolve("state");
        ExternalProcess.Result init = CliProcess.run(Map.of("SALLYPORT_HOME", state.toString()), TIMEOUT, "ca",
                "init");
        assertThat(init.exit()).as(init.stderr()).isZero();
        Path fifo = dir.resolve("key.fifo");
        mkfifo(fifo);
        Path policy = policy("ca: {cert: %s, key: %s}\n".formatted(state.resolve("ca/ca.pem"), fifo));

        ExternalProcess.Result run = CliProcess.run(Map.of("SALLYPORT_HOME", state.toString()), TIMEOUT, "proxy",
                "--config", policy.toString());

        assertThat(run.timedOut()).as("the start does not wait for a writer: %s", run.stderr()).isFalse();
        assertThat(run.exit()).as(run.stderr()).isEqualTo(1);
        assertThat(errorLines(run)).singleElement().asString()
                .contains("CA key " + fifo + ": is not a regular file (expected: a PEM file)");
    }

    /** A policy with the state folder's CA unless {@code ca} names one. */
    private Path policy(String ca) throws Exception {
        Path policy = dir.resolve("p.yaml");
        Files.writeString(policy, """
                proxy:
                  listen: 127.0.0.1:0
                  admin: 127.0.0.1:0
                audit: {path: %s}
                %srules:
                  - name: only-this
                    hosts: [allowed.example.com]
                """.formatted(dir.resolve("audit.jsonl"), ca));
        return policy;
    }

    private static void spoil(Path key, Path cert, String kind) throws Exception {
        Files.delete(key);
        switch (kind) {
            case "fifo" -> mkfifo(key);
            case "folder" -> Files.createDirectory(key);
            case "empty" -> Files.createFile(key);
            case "certificate" -> Files.copy(cert, key);
            default -> throw new IllegalArgumentException(kind);
        }
    }

    private static void mkfifo(Path path) {
        ExternalProcess.Result made = ExternalProcess.run(Duration.ofSeconds(10), List.of("mkfifo", path.toString()),
                null);
        assertThat(made.exit()).as(made.stderr()).isZero();
    }

    /** The lines the CLI wrote as its own ({@code sallyport: ...}), not the JVM's or a logger's. */
    private static List<String> errorLines(ExternalProcess.Result run) {
        return run.stderr().lines().filter(line -> line.startsWith("sallyport: ")).toList();
    }
}
