package dev.sallyport.cli;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

/**
 * A PrintStream over the command's PrintWriter, for library code that reports through streams; whole lines are
 * handed over, so tests that capture the writer see the same text a terminal would.
 */
final class WriterStream extends OutputStream {

    private final PrintWriter writer;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream();

    private WriterStream(PrintWriter writer) {
        this.writer = writer;
    }

    static PrintStream over(PrintWriter writer) {
        return new PrintStream(new WriterStream(writer), true, StandardCharsets.UTF_8);
    }

    @Override
    public synchronized void write(int b) {
        line.write(b);
        if (b == '\n') {
            flush();
        }
    }

    @Override
    public synchronized void flush() {
        if (line.size() > 0) {
            writer.write(line.toString(StandardCharsets.UTF_8));
            line.reset();
        }
        writer.flush();
    }
}
