package dev.sallyport.sandbox.net;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Runs host commands for real, each bounded by a timeout (interactive ones run until they end). */
public final class HostShell implements CommandRunner {

    private final Duration timeout;

    /** @param timeout the longest a captured command may run before it is killed */
    public HostShell(Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout: " + timeout + " (expected: > 0)");
        }
        this.timeout = timeout;
    }

    @Override
    public CommandResult capture(HostCommand command) throws IOException {
        Process process = new ProcessBuilder(command.argv()).start();
        CompletableFuture<byte[]> out = drain(process.getInputStream());
        CompletableFuture<byte[]> err = drain(process.getErrorStream());
        try (OutputStream stdin = process.getOutputStream()) {
            if (command.stdin() != null) {
                stdin.write(command.stdin().getBytes(StandardCharsets.UTF_8));
            }
        }
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IOException(command.argv().getFirst() + ": still running after " + timeout
                        + " (expected: to finish; command: " + command.toShell().lines().findFirst().orElse("") + ")");
            }
            CommandResult result = new CommandResult(process.exitValue(), text(out), text(err));
            if (result.exit() != 0 && !command.mayFail()) {
                throw new IOException("'" + command.toShell().lines().findFirst().orElse("") + "' exited "
                        + result.exit() + ": " + result.firstErrorLine());
            }
            return result;
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException(command.argv().getFirst() + ": interrupted", e);
        }
    }

    @Override
    public int interactive(HostCommand command) throws IOException {
        Process process = new ProcessBuilder(command.argv()).inheritIO().start();
        try {
            return process.waitFor();
        } catch (InterruptedException e) {
            process.destroy();
            Thread.currentThread().interrupt();
            throw new IOException(command.argv().getFirst() + ": interrupted", e);
        }
    }

    @Override
    public boolean dryRun() {
        return false;
    }

    private static CompletableFuture<byte[]> drain(InputStream stream) {
        CompletableFuture<byte[]> result = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try (stream) {
                ByteArrayOutputStream buffer = new ByteArrayOutputStream();
                stream.transferTo(buffer);
                result.complete(buffer.toByteArray());
            } catch (IOException e) {
                result.completeExceptionally(new UncheckedIOException(e));
            }
        });
        return result;
    }

    private String text(CompletableFuture<byte[]> bytes) throws IOException, InterruptedException {
        try {
            return new String(bytes.get(timeout.toMillis(), TimeUnit.MILLISECONDS), StandardCharsets.UTF_8);
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("reading command output failed: " + e.getMessage(), e);
        }
    }
}
