package dev.sallyport.policy;

import java.util.Objects;

/**
 * One problem in a policy file: where (file, 1-based line and column, the key path such as
 * {@code rules[3].hosts[0]}), what, and what was expected.
 */
public record PolicyProblem(String file, int line, int column, String path, String message, String expected) {

    public PolicyProblem {
        Objects.requireNonNull(file, "file");
        path = oneLine(Objects.requireNonNull(path, "path"));
        message = oneLine(Objects.requireNonNull(message, "message"));
        expected = oneLine(Objects.requireNonNull(expected, "expected"));
    }

    /**
     * {@code text} with line breaks and other control characters written as escapes: a key or value quoted from the
     * file can hold them (a plain scalar folded over lines), and one problem is one line (found by
     * {@code PolicyLoaderFuzzTest}).
     */
    private static String oneLine(String text) {
        StringBuilder sb = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean control = c < 0x20 || c == 0x7f || c == '\u0085' || c == '\u2028' || c == '\u2029';
            if (control && sb == null) {
                sb = new StringBuilder(text.length() + 8).append(text, 0, i);
            }
            if (sb != null) {
                if (c == '\n') {
                    sb.append("\\n");
                } else if (c == '\r') {
                    sb.append("\\r");
                } else if (c == '\t') {
                    sb.append("\\t");
                } else if (control) {
                    sb.append(String.format(java.util.Locale.ROOT, "\\u%04x", (int) c));
                } else {
                    sb.append(c);
                }
            }
        }
        return sb == null ? text : sb.toString();
    }

    /** {@code FILE:LINE:COL: path: message (expected: ...)}. */
    @Override
    public String toString() {
        return file + ":" + line + ":" + column + ": " + (path.isEmpty() ? "" : path + ": ") + message
                + " (expected: " + expected + ")";
    }
}
