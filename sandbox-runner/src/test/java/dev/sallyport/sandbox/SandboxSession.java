package dev.sallyport.sandbox;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A sandbox the test talks to while it runs: waits for a line the command prints, then lets the host act (bind a
 * socket, write a file) before telling the command to go on through its stdin.
 */
final class SandboxSession implements AutoCloseable {
    private final RunningSandbox sandbox;
    private final StringBuilder out = new StringBuilder();
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final CompletableFuture<String> err;

    SandboxSession(SandboxSpec spec) throws SandboxException {
        this(ProcessSandbox.start(spec, Stdio.pipes()));
    }

    SandboxSession(RunningSandbox sandbox) {
        this.sandbox = sandbox;
        Process p = sandbox.process();
        BufferedReader reader = p.inputReader(StandardCharsets.UTF_8);
        Thread.ofVirtual().start(() -> {
            try {
                for (String line; (line = reader.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // the sandbox ended
            }
            lines.add("\0eof");
        });
        err = CompletableFuture.supplyAsync(() -> {
            try {
                return new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "<read failed: " + e + ">";
            }
        });
    }

    /** Waits until the command prints {@code expected} (every line before it is kept for the result). */
    void awaitLine(String expected) throws Exception {
        long deadline = System.nanoTime() + Fixture.TIMEOUT.toNanos();
        while (true) {
            String line = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null || line.equals("\0eof")) {
                throw new AssertionError("no line '" + expected + "' from the sandbox; it printed:\n" + out
                        + "\nstderr:\n" + (line == null ? "(still running)" : err.get(10, TimeUnit.SECONDS)));
            }
            out.append(line).append('\n');
            if (line.equals(expected)) {
                return;
            }
        }
    }

    /** Writes one line to the command's stdin. */
    void send(String line) throws IOException {
        OutputStream in = sandbox.process().getOutputStream();
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    /** Waits for the command to end: its exit status and everything it printed. */
    Fixture.Run finish() throws Exception {
        sandbox.process().getOutputStream().close();
        Duration timeout = Fixture.TIMEOUT;
        Integer exit = sandbox.waitFor(timeout).orElseThrow(() -> new AssertionError("sandbox still running after "
                + timeout));
        for (String line = lines.take(); !line.equals("\0eof"); line = lines.take()) {
            out.append(line).append('\n');
        }
        return new Fixture.Run(exit, out.toString(), err.get(10, TimeUnit.SECONDS), sandbox.notices(),
                sandbox.limitEnforcement());
    }

    @Override
    public void close() {
        sandbox.close();
    }
}
