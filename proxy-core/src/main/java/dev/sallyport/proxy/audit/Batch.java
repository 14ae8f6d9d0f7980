package dev.sallyport.proxy.audit;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;

/**
 * ASCII bytes gathered for one write, and how many records they hold. Lines are encoded straight into it
 * ({@link JsonLine}), with no String in between; one thread only (nothing is synchronized, unlike a
 * {@code ByteArrayOutputStream}, whose every write takes a lock).
 */
final class Batch {

    private byte[] buf;
    private int count;
    private int records;

    Batch(int size) {
        buf = new byte[size];
    }

    /** Room for n more bytes; the array may be replaced, so callers fetch {@link #array} after this. */
    void ensure(int n) {
        if (count + n > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, count + n));
        }
    }

    void put(byte b) {
        ensure(1);
        buf[count++] = b;
    }

    void put(byte[] bytes) {
        put(bytes, 0, bytes.length);
    }

    void put(byte[] bytes, int offset, int length) {
        ensure(length);
        System.arraycopy(bytes, offset, buf, count, length);
        count += length;
    }

    /** Writes n in decimal. */
    void putDecimal(long n) {
        if (n < 0) {
            put(Long.toString(n).getBytes(StandardCharsets.US_ASCII));
            return;
        }
        int digits = 1;
        for (long m = n; m >= 10; m /= 10) {
            digits++;
        }
        ensure(digits);
        for (int i = count + digits - 1; i >= count; i--) {
            buf[i] = (byte) ('0' + n % 10);
            n /= 10;
        }
        count += digits;
    }

    /** The array bytes are written to, valid until the next {@link #ensure}. */
    byte[] array() {
        return buf;
    }

    /** Moves the end to position (after writing into {@link #array} directly, or to drop what follows it). */
    void position(int position) {
        count = position;
    }

    int size() {
        return count;
    }

    /** Feeds the bytes from start to the end into digest, without a copy. */
    void digest(MessageDigest digest, int start) {
        digest.update(buf, start, count - start);
    }

    /** Counts a record whose bytes were written. */
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
        count = 0;
        records = 0;
    }
}
