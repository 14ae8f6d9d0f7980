package dev.sallyport.policy;

import java.time.Duration;
import java.util.Objects;

/**
 * The {@code audit} section: where JSON Lines go; {@code "-"} is stdout, otherwise an absolute path. A file is
 * rotated (renamed with the time appended, a new one begun, the hash chain continued) once it holds
 * {@code rotateBytes} bytes or the proxy has written to it for {@code rotateEvery}; 0 and zero: never.
 */
public record AuditSettings(String path, long rotateBytes, Duration rotateEvery) {

    public static final AuditSettings STDOUT = new AuditSettings("-");

    public AuditSettings {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(rotateEvery, "rotateEvery");
        if (path.isEmpty()) {
            throw new IllegalArgumentException("audit.path: empty (expected: '-' or a file path)");
        }
        if (rotateBytes < 0 || rotateEvery.isNegative()) {
            throw new IllegalArgumentException("audit.rotate_bytes, audit.rotate_every: negative (expected: >= 0)");
        }
    }

    /** A log that is never rotated. */
    public AuditSettings(String path) {
        this(path, 0, Duration.ZERO);
    }

    public boolean isStdout() {
        return path.equals("-");
    }

    /** Whether the file is ever rotated. */
    public boolean rotates() {
        return rotateBytes > 0 || !rotateEvery.isZero();
    }
}
