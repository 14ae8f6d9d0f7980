package dev.sallyport.proxy.audit;

import java.util.List;

/**
 * Builds one JSON object on one line. Output is pure ASCII: every character outside printable ASCII is
 * written as {@code \}{@code uXXXX}, so no value (a path with a newline, U+2028, a lone surrogate) can
 * break the one-record-per-line structure or confuse a reader that splits on line terminators.
 * Lone surrogates become U+FFFD; valid pairs are kept as two escapes.
 */
final class JsonLine {

    /** Longest string value written; longer values are cut (a path is bounded by the header limit anyway). */
    static final int MAX_VALUE_CHARS = 8192;

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private final StringBuilder out = new StringBuilder(512);   // an exchange record is about 450 characters
    private boolean first = true;

    JsonLine() {
        out.append('{');
    }

    /** Adds {@code "name":"value"}; does nothing when value is null. */
    JsonLine field(String name, String value) {
        if (value != null) {
            key(name);
            string(value);
        }
        return this;
    }

    /** Adds {@code "name":number}; does nothing when value is null. */
    JsonLine field(String name, Number value) {
        if (value != null) {
            key(name);
            out.append(value.longValue());
        }
        return this;
    }

    /** Adds {@code "name":["a","b"]}; does nothing when values is null. */
    JsonLine field(String name, List<String> values) {
        if (values != null) {
            key(name);
            out.append('[');
            for (int i = 0; i < values.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                String v = values.get(i);
                if (v == null) {
                    out.append("null");
                } else {
                    string(v);
                }
            }
            out.append(']');
        }
        return this;
    }

    /** Closes the object and appends the line feed. */
    String end() {
        out.append("}\n");
        return out.toString();
    }

    private void key(String name) {
        if (!first) {
            out.append(',');
        }
        first = false;
        string(name);
        out.append(':');
    }

    private void string(String s) {
        out.append('"');
        int n = Math.min(s.length(), MAX_VALUE_CHARS);
        int plain = 0;
        while (plain < n && isPlain(s.charAt(plain))) {
            plain++;
        }
        out.append(s, 0, plain);   // the common case: nothing to escape
        for (int i = plain; i < n; i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c >= 0x20 && c < 0x7f) {
                        out.append(c);
                    } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                        unicode(c);
                        unicode(s.charAt(++i));
                    } else if (Character.isSurrogate(c)) {
                        unicode('\ufffd');
                    } else {
                        unicode(c);
                    }
                }
            }
        }
        out.append('"');
    }

    private static boolean isPlain(char c) {
        return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
    }

    private void unicode(char c) {
        out.append("\\u")
                .append(HEX[(c >> 12) & 0xf])
                .append(HEX[(c >> 8) & 0xf])
                .append(HEX[(c >> 4) & 0xf])
                .append(HEX[c & 0xf]);
    }
}
