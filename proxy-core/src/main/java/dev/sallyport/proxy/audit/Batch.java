package dev.sallyport.proxy.audit;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.security.MessageDigest;

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

    /** Writes n in decimal (n >= 0). */
    void writeDecimal(long n) {
        if (n < 10) {
            write((int) ('0' + n));
            return;
        }
        writeDecimal(n / 10);
        write((int) ('0' + n % 10));
    }

    /** Feeds the bytes from start to the end into digest, without a copy. */
    void digest(MessageDigest digest, int start) {
        digest.update(buf, start, count - start);
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
