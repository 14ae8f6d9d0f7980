package dev.sallyport.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs an external program (curl, openssl, ...) with a timeout and captures its exit status, stdout and stderr.
 * Both output streams are drained concurrently (no pipe deadlock); on timeout the whole process tree is killed.
 *
 * <pre>{@code
 * ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(20),
 *         List.of("curl", "-sS", "--cacert", ca.toString(), url), null);
 * assertThat(r.exit()).as(r.stderr()).isZero();
 * }</pre>
 */
public final class ExternalProcess {
    /** The exit value reported when the process was killed because it ran past its timeout. */
    public static final int TIMED_OUT = -1;

    private static final Duration DRAIN_GRACE = Duration.ofSeconds(5);

    private ExternalProcess() {
    }

    /**
     * The outcome of a run.
     *
     * @param exit   the exit status, or {@link #TIMED_OUT}
     * @param stdout standard output (UTF-8, malformed bytes replaced)
     * @param stderr standard error; on timeout ends with a line saying so
     */
    public record Result(int exit, String stdout, String stderr) {
        /** Whether the process was killed on timeout. */
        public boolean timedOut() {
            return exit == TIMED_OUT;
        }
    }

    /**
     * Runs {@code command} (no shell), feeding it {@code stdin} (or an immediately closed stdin when null), and
     * waits up to {@code timeout}. On timeout the process and all its descendants are killed and the result has
     * exit {@link #TIMED_OUT} with whatever output was captured.
     *
     * @throws UncheckedIOException if the program cannot be started (e.g. not installed)
     */
    public static Result run(Duration timeout, List<String> command, /* @Nullable */ byte[] stdin) {
        if (command.isEmpty()) {
            throw new IllegalArgumentException("command: empty (expected: a program and its arguments)");
        }
        Process process;
        try {
            process = new ProcessBuilder(command).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command.getFirst() + ": " + e.getMessage()
                    + " (expected: it on PATH; run scripts/install-deps.sh)", e);
        }
        CompletableFuture<byte[]> out = drain(process.getInputStream());
        CompletableFuture<byte[]> err = drain(process.getErrorStream());
        CompletableFuture<Void> in = feed(process.getOutputStream(), stdin);
        boolean finished;
        try {
            finished = process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            killTree(process);
            throw new IllegalStateException("interrupted while running " + command.getFirst(), e);
        }
        if (!finished) {
            killTree(process);
        }
        in.cancel(true);
        String stdout = text(out);
        String stderr = text(err);
        if (!finished) {
            return new Result(TIMED_OUT, stdout, stderr + "\n[ExternalProcess: killed " + command.getFirst()
                    + " after " + timeout + "]");
        }
        return new Result(process.exitValue(), stdout, stderr);
    }

    private static void killTree(Process process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(DRAIN_GRACE.toSeconds(), TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static CompletableFuture<byte[]> drain(InputStream stream) {
        CompletableFuture<byte[]> result = new CompletableFuture<>();
        Thread.ofVirtual().name("external-process-drain").start(() -> {
            try (stream) {
                ByteArrayOutputStream buffer = new ByteArrayOutputStream();
                stream.transferTo(buffer);
                result.complete(buffer.toByteArray());
            } catch (IOException e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    private static CompletableFuture<Void> feed(OutputStream stream, /* @Nullable */ byte[] stdin) {
        CompletableFuture<Void> result = new CompletableFuture<>();
        Thread.ofVirtual().name("external-process-stdin").start(() -> {
            try (stream) {
                if (stdin != null) {
                    stream.write(stdin);
                }
                result.complete(null);
            } catch (IOException e) {
                result.complete(null); // the program exited without reading all of stdin: not our concern
            }
        });
        return result;
    }

    private static String text(CompletableFuture<byte[]> bytes) {
        try {
            return new String(bytes.get(DRAIN_GRACE.toMillis(), TimeUnit.MILLISECONDS), StandardCharsets.UTF_8);
        } catch (TimeoutException e) {
            return "[ExternalProcess: output still open after the process ended]";
        } catch (ExecutionException e) {
            return "[ExternalProcess: cannot read output: " + e.getCause() + "]";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }
}
