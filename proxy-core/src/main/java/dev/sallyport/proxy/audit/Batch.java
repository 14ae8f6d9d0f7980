package dev.sallyport.proxy.audit;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;

/** The lines the writer has gathered and not written yet, and how many records they hold. Writer thread only. */
final class Batch extends ByteArrayOutputStream {

    private int records;

    Batch(int size) {
        super(size);
    }

    void add(byte[] line) {
        writeBytes(line);
        records++;
    }

    /** Counts a record whose bytes were written into the batch directly. */
    void counted() {
        records++;
    }

    int records() {
        return records;
    }

    boolean isEmpty() {
        return count == 0;
    }

    /** The gathered bytes, without a copy; valid until {@link #clear}. */
    ByteBuffer view() {
        return ByteBuffer.wrap(buf, 0, count);
    }

    void clear() {
        reset();
        records = 0;
    }
}
