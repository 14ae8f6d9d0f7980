package dev.sallyport.proxy.inject;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Streaming, length-preserving redaction of every pattern of one or two {@link PatternSet}s.
 *
 * <p>Memory: between calls it keeps at most the last {@code maxLength - 1} bytes, and only those that
 * could still be the start of a match (so ordinary text is never delayed), plus a fixed work array. Every position is evaluated once all the bytes its longest pattern
 * could cover have arrived, so matches split across chunks (down to one byte per chunk) are found.
 * Overlapping and adjacent matches are merged: the redacted bytes are the union of all match intervals,
 * so a pattern that starts inside another one cannot leave its tail visible.
 *
 * <p>Replacement: each redacted byte becomes the byte of {@link #MARKER} at its offset in the redacted
 * run (repeating), so {@code [sallyport:redacted][sall...} has exactly the length of what it hides.
 * Lengths never change: Content-Length, ranges and binary framing stay valid.
 *
 * <p>Not thread-safe: one instance per stream.
 */
final class StreamRedactor {

    static final byte[] MARKER = "[sallyport:redacted]".getBytes(StandardCharsets.US_ASCII);
    private static final int SLICE = 16 * 1024;

    private final PatternSet first;
    private final PatternSet second;
    private final int maxLength;
    private final byte[] window;
    private int carried;
    /** Bytes of the window, from its start, covered by a match already found. */
    private int redactUntil;
    private long runOffset;
    private long redactedBytes;

    StreamRedactor(PatternSet first, PatternSet second) {
        this.first = first;
        this.second = second;
        this.maxLength = Math.max(2, Math.max(first.maxLength(), second.maxLength()));
        this.window = new byte[maxLength - 1 + SLICE];
    }

    boolean active() {
        return !first.isEmpty() || !second.isEmpty();
    }

    /** Total bytes replaced so far (for tests and metrics). */
    long redactedBytes() {
        return redactedBytes;
    }

    /** Consumes {@code length} bytes of {@code in} from {@code offset}; writes what is settled to {@code out}. */
    void feed(byte[] in, int offset, int length, ByteBuf out) {
        int pos = offset;
        int end = offset + length;
        while (pos < end) {
            int n = Math.min(SLICE, end - pos);
            System.arraycopy(in, pos, window, carried, n);
            process(carried + n, false, out);
            pos += n;
        }
    }

    /** Same as {@link #feed(byte[], int, int, ByteBuf)} for the readable bytes of {@code in} (not released). */
    void feed(ByteBuf in, ByteBuf out) {
        int pos = in.readerIndex();
        int end = in.writerIndex();
        while (pos < end) {
            int n = Math.min(SLICE, end - pos);
            in.getBytes(pos, window, carried, n);
            process(carried + n, false, out);
            pos += n;
        }
    }

    /** Ends the stream: writes the carried bytes, redacted where they match. */
    void finish(ByteBuf out) {
        process(carried, true, out);
    }

    /** One-shot redaction of a small, complete value (a header value, a reason phrase). */
    static byte[] redactAll(PatternSet first, PatternSet second, byte[] value) {
        int until = 0;
        byte[] out = null;
        int run = 0;
        for (int p = 0; p < value.length; p++) {
            if (p >= until) {
                run = 0;
            }
            int len = longest(first, second, value, p, value.length);
            until = Math.max(until, p + len);
            if (p < until) {
                if (out == null) {
                    out = value.clone();
                }
                out[p] = MARKER[run++ % MARKER.length];
            }
        }
        return out == null ? value : out;
    }

    private static int longest(PatternSet a, PatternSet b, byte[] buf, int pos, int end) {
        PatternSet.Pattern pa = a.longestAt(buf, pos, end);
        PatternSet.Pattern pb = b.isEmpty() ? null : b.longestAt(buf, pos, end);
        int la = pa == null ? 0 : pa.length();
        int lb = pb == null ? 0 : pb.length();
        return Math.max(la, lb);
    }

    /**
     * Bytes held back at the end of a chunk: from the first position (among the last {@code maxLength - 1})
     * where the remaining bytes are a proper prefix of some pattern. Text that cannot start a secret is
     * never delayed, which keeps streamed responses (SSE, WebSocket) flowing.
     */
    private int holdFrom(int len) {
        for (int p = Math.max(0, len - (maxLength - 1)); p < len; p++) {
            if (first.prefixAt(window, p, len) || second.prefixAt(window, p, len)) {
                return p;
            }
        }
        return len;
    }

    private void process(int len, boolean last, ByteBuf out) {
        int limit = last ? len : holdFrom(len);
        int plainStart = 0;
        int p = 0;
        while (p < limit) {
            if (p < redactUntil) {
                int m = longest(first, second, window, p, len);
                if (p + m > redactUntil) {
                    redactUntil = p + m;
                }
                if (plainStart < p) {
                    out.writeBytes(window, plainStart, p - plainStart);
                }
                out.writeByte(MARKER[(int) (runOffset++ % MARKER.length)]);
                redactedBytes++;
                plainStart = ++p;
                continue;
            }
            runOffset = 0;
            p = Math.min(first.nextCandidate(window, p, limit, len), second.nextCandidate(window, p, limit, len));
            if (p >= limit) {
                break;
            }
            int m = longest(first, second, window, p, len);
            if (m > 0) {
                redactUntil = p + m;
            } else {
                p++;
            }
        }
        if (plainStart < limit) {
            out.writeBytes(window, plainStart, limit - plainStart);
        }
        carried = len - limit;
        System.arraycopy(window, limit, window, 0, carried);
        redactUntil = Math.max(0, redactUntil - limit);
        if (last) {
            Arrays.fill(window, (byte) 0);
            carried = 0;
        }
    }
}
