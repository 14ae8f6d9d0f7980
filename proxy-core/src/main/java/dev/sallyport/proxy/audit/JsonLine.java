package dev.sallyport.proxy.audit;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Builds one JSON object on one line, as ASCII bytes straight into a {@link Batch}: the writer's batch (the
 * chain then ends the line, {@link AuditChain#link}) or a buffer of its own ({@link #end} gives the text). Output is
 * pure ASCII: every character outside printable ASCII is written as {@code \}{@code uXXXX}, so no value (a path
 * with a newline, U+2028, a lone surrogate) can break the one-record-per-line structure or confuse a reader that
 * splits on line terminators. Lone surrogates become U+FFFD; valid pairs are kept as two escapes.
 */
final class JsonLine {

    /** Longest string value written; longer values are cut (a path is bounded by the header limit anyway). */
    static final int MAX_VALUE_CHARS = 8192;

    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NULL = "null".getBytes(StandardCharsets.US_ASCII);
    /** The encoded {@code "name":} of field names seen: the record's names are a few dozen constants. */
    private static final Map<String, byte[]> KEYS = new ConcurrentHashMap<>();
    private static final int MAX_KEYS = 256;

    private final Batch out;
    private final int start;
    private boolean first = true;

    /** A line of its own, read with {@link #end}. */
    JsonLine() {
        this(new Batch(512));   // an exchange record is about 450 characters
    }

    /** A line appended to out, from its current end. */
    JsonLine(Batch out) {
        this.out = out;
        this.start = out.size();
        out.put((byte) '{');
    }

    /** Where the line begins in its batch. */
    int start() {
        return start;
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
            out.putDecimal(value.longValue());
        }
        return this;
    }

    /** Adds {@code "name":["a","b"]}; does nothing when values is null. */
    JsonLine field(String name, List<String> values) {
        if (values != null) {
            key(name);
            out.put((byte) '[');
            for (int i = 0; i < values.size(); i++) {
                if (i > 0) {
                    out.put((byte) ',');
                }
                String v = values.get(i);
                if (v == null) {
                    out.put(NULL);
                } else {
                    string(v);
                }
            }
            out.put((byte) ']');
        }
        return this;
    }

    /** Closes the object, appends the line feed and gives the line's text. */
    String end() {
        out.put((byte) '}');
        out.put((byte) '\n');
        return new String(out.array(), start, out.size() - start, StandardCharsets.US_ASCII);
    }

    private void key(String name) {
        if (!first) {
            out.put((byte) ',');
        }
        first = false;
        byte[] encoded = KEYS.get(name);
        if (encoded == null) {
            JsonLine alone = new JsonLine();
            alone.string(name);
            alone.out.put((byte) ':');
            encoded = Arrays.copyOfRange(alone.out.array(), 1, alone.out.size());
            if (KEYS.size() < MAX_KEYS) {   // names come from code; a bound all the same
                KEYS.putIfAbsent(name, encoded);
            }
        }
        out.put(encoded);
    }

    private void string(String s) {
        int n = Math.min(s.length(), MAX_VALUE_CHARS);
        out.ensure(n + 2);
        byte[] b = out.array();
        int p = out.size();
        b[p++] = '"';
        int i = 0;
        for (; i < n; i++) {   // the common case: nothing to escape, one pass
            char c = s.charAt(i);
            if (!isPlain(c)) {
                break;
            }
            b[p++] = (byte) c;
        }
        out.position(p);
        if (i < n) {
            escaped(s, i, n);
        }
        out.put((byte) '"');
    }

    private void escaped(String s, int from, int n) {
        for (int i = from; i < n; i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> escape('"');
                case '\\' -> escape('\\');
                case '\n' -> escape('n');
                case '\r' -> escape('r');
                case '\t' -> escape('t');
                case '\b' -> escape('b');
                case '\f' -> escape('f');
                default -> {
                    if (c >= 0x20 && c < 0x7f) {
                        out.put((byte) c);
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
    }

    private static boolean isPlain(char c) {
        return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
    }

    private void escape(char c) {
        out.put((byte) '\\');
        out.put((byte) c);
    }

    private void unicode(char c) {
        out.ensure(6);
        out.put((byte) '\\');
        out.put((byte) 'u');
        out.put(HEX[(c >> 12) & 0xf]);
        out.put(HEX[(c >> 8) & 0xf]);
        out.put(HEX[(c >> 4) & 0xf]);
        out.put(HEX[c & 0xf]);
    }
}
