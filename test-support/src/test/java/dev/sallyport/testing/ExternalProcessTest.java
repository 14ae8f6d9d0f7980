package dev.sallyport.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ExternalProcessTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Test
    void capturesExitStdoutAndStderr() {
        ExternalProcess.Result r = ExternalProcess.run(TIMEOUT,
                List.of("sh", "-c", "echo out; echo err >&2; exit 3"), null);
        assertThat(r).isEqualTo(new ExternalProcess.Result(3, "out\n", "err\n"));
        assertThat(r.timedOut()).isFalse();
    }

    @Test
    void feedsStdin() {
        byte[] input = "line one\nline two\n".getBytes(StandardCharsets.UTF_8);
        ExternalProcess.Result r = ExternalProcess.run(TIMEOUT, List.of("cat"), input);
        assertThat(r.exit()).isZero();
        assertThat(r.stdout()).isEqualTo("line one\nline two\n");
    }

    @Test
    void drainsLargeOutputOnBothStreamsWithoutDeadlock() {
        ExternalProcess.Result r = ExternalProcess.run(TIMEOUT, List.of("sh", "-c",
                "head -c 2000000 /dev/zero | tr '\\0' a; head -c 2000000 /dev/zero | tr '\\0' b >&2"), null);
        assertThat(r.exit()).isZero();
        assertThat(r.stdout()).hasSize(2_000_000);
        assertThat(r.stderr()).hasSize(2_000_000);
    }

    @Test
    void killsTheWholeProcessTreeOnTimeout(@TempDir Path dir) throws Exception {
        Path pidFile = dir.resolve("child.pid");
        Instant started = Instant.now();
        ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(2), List.of("sh", "-c",
                "sleep 300 & echo $! > " + pidFile + "; echo started; wait"), null);

        assertThat(r.timedOut()).isTrue();
        assertThat(r.exit()).isEqualTo(ExternalProcess.TIMED_OUT);
        assertThat(r.stdout()).isEqualTo("started\n");
        assertThat(r.stderr()).contains("killed sh after PT2S");
        assertThat(Duration.between(started, Instant.now())).isLessThan(Duration.ofSeconds(20));
        long child = Long.parseLong(Files.readString(pidFile).trim());
        Optional<ProcessHandle> handle = ProcessHandle.of(child);
        if (handle.isPresent()) {
            handle.get().onExit().get(10, TimeUnit.SECONDS); // times out (fails) if the grandchild survived
        }
        assertThat(ProcessHandle.of(child).map(ProcessHandle::isAlive).orElse(false)).isFalse();
    }

    @Test
    void aMissingProgramIsAOneLineError() {
        assertThatThrownBy(() -> ExternalProcess.run(TIMEOUT, List.of("no-such-program-sallyport"), null))
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("cannot run no-such-program-sallyport")
                .hasMessageContaining("(expected: it on PATH; run scripts/install-deps.sh)");
    }
}
