package dev.sallyport.policy;

import java.util.Objects;

/**
 * One problem in a policy file: where (file, 1-based line and column, the key path such as
 * {@code rules[3].hosts[0]}), what, and what was expected.
 */
public record PolicyProblem(String file, int line, int column, String path, String message, String expected) {

    public PolicyProblem {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(expected, "expected");
    }

    /** {@code FILE:LINE:COL: path: message (expected: ...)}. */
    @Override
    public String toString() {
        return file + ":" + line + ":" + column + ": " + (path.isEmpty() ? "" : path + ": ") + message
                + " (expected: " + expected + ")";
    }
}
