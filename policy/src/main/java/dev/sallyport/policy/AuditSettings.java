package dev.sallyport.policy;

import java.util.Objects;

/** The {@code audit} section: where JSON Lines go; {@code "-"} is stdout, otherwise an absolute path. */
public record AuditSettings(String path) {

    public static final AuditSettings STDOUT = new AuditSettings("-");

    public AuditSettings {
        Objects.requireNonNull(path, "path");
        if (path.isEmpty()) {
            throw new IllegalArgumentException("audit.path: empty (expected: '-' or a file path)");
        }
    }

    public boolean isStdout() {
        return path.equals("-");
    }
}
