package dev.sallyport.proxy.audit;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;

/** Stdout as a sink that reports failure: a {@link PrintStream} swallows errors, this turns them into exceptions. */
final class StdoutSink extends OutputStream {

    private final PrintStream out;

    StdoutSink(PrintStream out) {
        this.out = out;
    }

    @Override
    public void write(int b) {
        out.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) {
        out.write(b, off, len);
    }

    @Override
    public void flush() throws IOException {
        if (out.checkError()) {
            throw new IOException("stdout: write failed (expected: an open stdout, e.g. not a closed pipe)");
        }
    }
}
