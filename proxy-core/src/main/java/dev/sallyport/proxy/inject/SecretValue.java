package dev.sallyport.proxy.inject;

import java.util.Arrays;

/**
 * The bytes of one real secret. Held privately, never printed: {@link #toString()} says only that a value
 * is redacted, {@link #equals}/{@link #hashCode()} are identity-based (a content hash would be an oracle).
 * {@link #close()} overwrites the bytes with zeros; any later use throws {@link IllegalStateException}.
 *
 * <p>Accepted values are single-line: at least {@value #MIN_LENGTH} bytes, none of them a control
 * character (0x00-0x1F, 0x7F), so an injected value can never split a header line. One trailing
 * {@code "\n"} or {@code "\r\n"} is stripped by {@link #fromSource} (files written with {@code echo}).
 */
public final class SecretValue implements AutoCloseable {

    /** Shorter values could not be scrubbed from responses without redacting ordinary text. */
    public static final int MIN_LENGTH = 8;

    private final byte[] bytes;
    private volatile boolean wiped;

    private SecretValue(byte[] bytes) {
        this.bytes = bytes;
    }

    /**
     * Copies {@code raw} after stripping one trailing line break. The error message never contains the
     * value, only its position and the rule it broke.
     */
    public static SecretValue fromSource(byte[] raw) {
        int end = raw.length;
        if (end > 0 && raw[end - 1] == '\n') {
            end--;
            if (end > 0 && raw[end - 1] == '\r') {
                end--;
            }
        }
        return of(Arrays.copyOf(raw, end));
    }

    /** Copies {@code raw} as is; throws {@link IllegalArgumentException} with a value-free message. */
    public static SecretValue of(byte[] raw) {
        if (raw.length < MIN_LENGTH) {
            throw new IllegalArgumentException(
                    "value has " + raw.length + " bytes (expected: at least " + MIN_LENGTH + ")");
        }
        for (int i = 0; i < raw.length; i++) {
            int b = raw[i] & 0xFF;
            if (b < 0x20 || b == 0x7F) {
                throw new IllegalArgumentException("value has a control character at byte " + i
                        + " (expected: a single-line token without control characters)");
            }
        }
        return new SecretValue(raw.clone());
    }

    public int length() {
        check();
        return bytes.length;
    }

    /** A fresh copy of the bytes; the caller should wipe it when done. */
    byte[] copyBytes() {
        check();
        return bytes.clone();
    }

    boolean isWiped() {
        return wiped;
    }

    private void check() {
        if (wiped) {
            throw new IllegalStateException("secret value was wiped (expected: a value from the current store)");
        }
    }

    /** Overwrites the bytes with zeros. Idempotent. */
    @Override
    public void close() {
        wiped = true;
        Arrays.fill(bytes, (byte) 0);
    }

    @Override
    public String toString() {
        return "SecretValue[redacted]";
    }

    @Override
    public boolean equals(Object other) {
        return this == other;
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(this);
    }
}
