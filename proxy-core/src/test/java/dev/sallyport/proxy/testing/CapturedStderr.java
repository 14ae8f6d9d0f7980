package dev.sallyport.proxy.testing;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Captures what the process writes to stderr (the proxy's slf4j-simple log output) while still passing it on.
 * Install before the proxy starts (slf4j-simple looks {@code System.err} up on every line), close to restore.
 */
public final class CapturedStderr implements AutoCloseable {

    private final PrintStream original;
    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

    private CapturedStderr() {
        original = System.err;
        System.setErr(new PrintStream(new OutputStream() {
            @Override
            public void write(int b) {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                synchronized (captured) {
                    captured.write(b, off, len);
                }
                original.write(b, off, len);
            }
        }, true, StandardCharsets.UTF_8));
    }

    public static CapturedStderr install() {
        return new CapturedStderr();
    }

    /** Everything written since {@link #install}. */
    public String text() {
        synchronized (captured) {
            return captured.toString(StandardCharsets.UTF_8);
        }
    }

    /** Lines that are part of a stack trace or Netty's "reached the tail of the pipeline" warning. */
    public java.util.List<String> stackTraceLines() {
        return text().lines().filter(l -> l.startsWith("\tat ") || l.startsWith("Caused by:")
                || l.contains("reached at the tail of the pipeline")).toList();
    }

    @Override
    public void close() {
        System.setErr(original);
    }
}
