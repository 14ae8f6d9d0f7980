package dev.sallyport.proxy.inject;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The byte strings under which a value can appear in text that went through common encodings, so the
 * scanners can look for all of them at once.
 *
 * <p><b>Base64 inside a longer base64 string.</b> When {@code v} is embedded in a longer byte string that
 * is then base64-encoded (a Basic credential {@code user:v}, a JSON blob, a JWT), the alphabet
 * characters that depend only on {@code v}'s bits depend on where {@code v} starts modulo 3 bytes. For a
 * start offset {@code k} in {0, 1, 2}, encode {@code k} zero bytes followed by {@code v} and keep the
 * characters whose 6 bits all fall inside {@code v}: from {@code ceil(8k/6)} to
 * {@code floor(8(k+n)/6)}. Whatever the surrounding bytes are, one of these three fragments occurs
 * verbatim in the encoding. Only the first and last few bits of {@code v} (at most 4 + 4) sit in
 * characters shared with the neighbours; that is what a fragment match leaves unredacted.
 */
final class EncodedForms {

    private EncodedForms() {}

    /** The three alignment fragments, in the standard and the URL-safe alphabet (deduplicated). */
    static List<byte[]> base64Fragments(byte[] v) {
        Set<ByteBuffer> out = new LinkedHashSet<>();
        for (Base64.Encoder encoder : List.of(Base64.getEncoder().withoutPadding(),
                Base64.getUrlEncoder().withoutPadding())) {
            for (int k = 0; k < 3; k++) {
                byte[] padded = new byte[k + v.length];
                System.arraycopy(v, 0, padded, k, v.length);
                byte[] enc = encoder.encode(padded);
                int from = (8 * k + 5) / 6;
                int to = (8 * (k + v.length)) / 6;
                if (to - from >= 2) {
                    byte[] frag = new byte[to - from];
                    System.arraycopy(enc, from, frag, 0, frag.length);
                    out.add(ByteBuffer.wrap(frag));
                }
            }
        }
        return unwrap(out);
    }

    /**
     * Every byte outside RFC 3986 unreserved as {@code %XX} (upper and lower hex), and the HTML-form
     * flavour ({@code application/x-www-form-urlencoded}: space as {@code +}, {@code ~} escaped, {@code *} kept).
     * Other mixes of escaped and unescaped bytes are not covered.
     */
    static List<byte[]> percentForms(byte[] v) {
        Set<ByteBuffer> out = new LinkedHashSet<>();
        out.add(ByteBuffer.wrap(percent(v, "0123456789ABCDEF", false)));
        out.add(ByteBuffer.wrap(percent(v, "0123456789abcdef", false)));
        out.add(ByteBuffer.wrap(percent(v, "0123456789ABCDEF", true)));
        out.add(ByteBuffer.wrap(percent(v, "0123456789abcdef", true)));
        out.remove(ByteBuffer.wrap(v));
        return unwrap(out);
    }

    /** JSON string escaping of {@code "}, {@code \} and {@code /} (the only bytes a valid value can need). */
    static List<byte[]> jsonForms(byte[] v) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(v.length + 8);
        boolean changed = false;
        for (byte b : v) {
            if (b == '"' || b == '\\' || b == '/') {
                out.write('\\');
                changed = true;
            }
            out.write(b);
        }
        return changed ? List.of(out.toByteArray()) : List.of();
    }

    private static byte[] percent(byte[] v, String hex, boolean form) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(v.length * 3);
        for (byte b : v) {
            int c = b & 0xFF;
            if (unreserved(c) && !(form && c == '~')) {
                out.write(c);
            } else if (form && c == '*') {
                out.write(c);
            } else if (form && c == ' ') {
                out.write('+');
            } else {
                out.write('%');
                out.write(hex.charAt(c >> 4));
                out.write(hex.charAt(c & 0xF));
            }
        }
        return out.toByteArray();
    }

    static boolean unreserved(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '-' || c == '.' || c == '_' || c == '~';
    }

    /**
     * Decodes {@code %XX} escapes (invalid escapes stay as they are), repeatedly up to {@code rounds}
     * times while something changes: catches double encoding.
     */
    static byte[] percentDecode(byte[] in, int rounds) {
        byte[] cur = in;
        for (int r = 0; r < rounds; r++) {
            byte[] next = percentDecodeOnce(cur);
            if (next == cur) {
                return cur;
            }
            cur = next;
        }
        return cur;
    }

    /** Like {@link #percentDecode} after turning {@code +} into space (form encoding); the input if it has no '+'. */
    static byte[] formDecode(byte[] in, int rounds) {
        int plus = -1;
        for (int i = 0; i < in.length && plus < 0; i++) {
            plus = in[i] == '+' ? i : -1;
        }
        if (plus < 0) {
            return in;
        }
        byte[] copy = in.clone();
        for (int i = plus; i < copy.length; i++) {
            if (copy[i] == '+') {
                copy[i] = ' ';
            }
        }
        return percentDecode(copy, rounds);
    }

    private static byte[] percentDecodeOnce(byte[] in) {
        int first = -1;
        for (int i = 0; i + 2 < in.length; i++) {
            if (in[i] == '%' && hex(in[i + 1]) >= 0 && hex(in[i + 2]) >= 0) {
                first = i;
                break;
            }
        }
        if (first < 0) {
            return in;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(in.length);
        out.write(in, 0, first);
        for (int i = first; i < in.length; i++) {
            if (in[i] == '%' && i + 2 < in.length && hex(in[i + 1]) >= 0 && hex(in[i + 2]) >= 0) {
                out.write(hex(in[i + 1]) << 4 | hex(in[i + 2]));
                i += 2;
            } else {
                out.write(in[i]);
            }
        }
        return out.toByteArray();
    }

    private static int hex(byte b) {
        if (b >= '0' && b <= '9') {
            return b - '0';
        }
        if (b >= 'a' && b <= 'f') {
            return b - 'a' + 10;
        }
        if (b >= 'A' && b <= 'F') {
            return b - 'A' + 10;
        }
        return -1;
    }

    private static List<byte[]> unwrap(Set<ByteBuffer> set) {
        List<byte[]> out = new ArrayList<>(set.size());
        for (ByteBuffer b : set) {
            byte[] copy = new byte[b.remaining()];
            b.duplicate().get(copy);
            out.add(copy);
        }
        return out;
    }
}
