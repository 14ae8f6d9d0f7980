package dev.sallyport.proxy.inject;

import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * Streaming gzip (RFC 1952, concatenated members allowed) and deflate (zlib-wrapped, or raw deflate as
 * some servers send it) decoding with a hard cap on the decoded size. Input arrives in arbitrary pieces
 * ({@link #feed}); decoded bytes are drawn out with {@link #pump} under a budget, so the caller decides how much
 * decoded data exists at once, and go to a {@link Sink} in pieces of at most 16 KiB. Not thread-safe;
 * {@link #close()} frees the native inflater.
 */
final class InflatingDecoder implements AutoCloseable {

    enum Format { GZIP, DEFLATE }

    @FunctionalInterface
    interface Sink {
        void accept(byte[] buf, int offset, int length);
    }

    private enum State { HEADER, INFLATE, TRAILER, MEMBER_END, DONE }

    private static final int MAX_GZIP_HEADER = 64 * 1024;
    private static final int FHCRC = 2;
    private static final int FEXTRA = 4;
    private static final int FNAME = 8;
    private static final int FCOMMENT = 16;

    private final Format format;
    private final long maxDecoded;
    private final byte[] out = new byte[16 * 1024];
    private final CRC32 crc = new CRC32();
    private Inflater inflater;
    private State state = State.HEADER;
    /** Input not decoded yet: {@code data[pos..end)}. */
    private byte[] data = new byte[0];
    private int pos;
    private int end;
    private long decoded;
    private long memberSize;

    InflatingDecoder(Format format, long maxDecoded) {
        this.format = format;
        this.maxDecoded = maxDecoded;
    }

    String name() {
        return format == Format.GZIP ? "gzip" : "deflate";
    }

    /** Decodes all of {@code in} at once (no bound on the output of one call: for callers that hold it all). */
    void decode(byte[] in, int offset, int length, Sink sink) throws ResponseDecodeException {
        feed(in, offset, length);
        while (!pump(sink, Long.MAX_VALUE)) {
            // until the input is used up
        }
    }

    /** Adds input after what has not been decoded yet. The bytes are copied. */
    void feed(byte[] in, int offset, int length) {
        int rest = end - pos;
        byte[] next = new byte[rest + length];
        System.arraycopy(data, pos, next, 0, rest);
        System.arraycopy(in, offset, next, rest, length);
        data = next;
        pos = 0;
        end = next.length;
    }

    /**
     * Decodes until about {@code budget} bytes went to {@code sink} (a piece of at most 16 KiB may pass it) or the
     * input is used up. Returns true when everything fed so far is decoded (feed more, or {@link #finish}), false
     * when the budget stopped it with more to come: call again, for instance once the reader has caught up. So a
     * small compressed chunk never turns into megabytes held at once.
     */
    boolean pump(Sink sink, long budget) throws ResponseDecodeException {
        long produced = 0;
        while (true) {
            switch (state) {
                case HEADER, MEMBER_END -> {
                    if (pos >= end) {
                        return true;
                    }
                    int used = startMember(data, pos, end);
                    if (used < 0) {
                        if (end - pos > MAX_GZIP_HEADER) {
                            throw fail("header longer than " + MAX_GZIP_HEADER + " bytes");
                        }
                        return true;
                    }
                    pos += used;
                }
                case INFLATE -> {
                    if (produced >= budget) {
                        return false;
                    }
                    long n = inflate(sink, budget - produced);
                    if (n < 0) {
                        return true;    // needs input
                    }
                    produced += n;
                }
                case TRAILER -> {
                    if (end - pos < 8) {
                        return true;
                    }
                    checkTrailer(data, pos);
                    pos += 8;
                    state = State.MEMBER_END;
                }
                case DONE -> {
                    if (pos < end) {
                        throw fail("data after the end of the stream");
                    }
                    return true;
                }
            }
        }
    }

    /** Checks the stream ended at a boundary; a truncated body is an error. */
    void finish() throws ResponseDecodeException {
        boolean complete = format == Format.GZIP ? state == State.MEMBER_END : state == State.DONE;
        if (!complete || pos < end) {
            throw fail("stream ended early (expected: a complete " + name() + " stream)");
        }
    }

    /** Parses a gzip member header or picks the deflate flavour; returns bytes used, or -1 if incomplete. */
    private int startMember(byte[] d, int pos, int end) throws ResponseDecodeException {
        int avail = end - pos;
        if (format == Format.DEFLATE) {
            if (state == State.MEMBER_END) {
                throw fail("data after the end of the stream");
            }
            if (avail < 2) {
                return -1;
            }
            int cmf = d[pos] & 0xFF;
            int flg = d[pos + 1] & 0xFF;
            boolean zlib = (cmf & 0x0F) == 8 && (cmf >> 4) <= 7 && ((cmf << 8) | flg) % 31 == 0;
            inflater = new Inflater(!zlib);
            state = State.INFLATE;
            return 0;
        }
        if (avail < 10) {
            return -1;
        }
        if ((d[pos] & 0xFF) != 0x1F || (d[pos + 1] & 0xFF) != 0x8B || d[pos + 2] != 8) {
            throw fail("not a gzip member (expected: magic 1f 8b and method 8)");
        }
        int flags = d[pos + 3] & 0xFF;
        int i = pos + 10;
        if ((flags & FEXTRA) != 0) {
            if (end - i < 2) {
                return -1;
            }
            i += 2 + ((d[i] & 0xFF) | (d[i + 1] & 0xFF) << 8);
        }
        for (int flag : new int[] {FNAME, FCOMMENT}) {
            if ((flags & flag) != 0) {
                while (i < end && d[i] != 0) {
                    i++;
                }
                if (i >= end) {
                    return -1;
                }
                i++;
            }
        }
        if ((flags & FHCRC) != 0) {
            i += 2;
        }
        if (i > end) {
            return -1;
        }
        if (inflater == null) {
            inflater = new Inflater(true);
        } else {
            inflater.reset();
        }
        crc.reset();
        memberSize = 0;
        state = State.INFLATE;
        return i - pos;
    }

    /**
     * Inflates from the pending input, at most about {@code budget} bytes; returns the bytes produced (0 when the
     * stream ended before any), or -1 when the inflater needs more input and produced nothing.
     */
    private long inflate(Sink sink, long budget) throws ResponseDecodeException {
        inflater.setInput(data, pos, end - pos);
        long produced = 0;
        try {
            while (produced < budget) {
                int n = inflater.inflate(out);
                pos = end - inflater.getRemaining();
                if (n > 0) {
                    decoded += n;
                    if (decoded > maxDecoded) {
                        throw fail("decoded body larger than " + maxDecoded + " bytes (expected: at most that;"
                                + " a compression bomb is refused)");
                    }
                    if (format == Format.GZIP) {
                        crc.update(out, 0, n);
                        memberSize += n;
                    }
                    sink.accept(out, 0, n);
                    produced += n;
                    continue;
                }
                if (inflater.finished()) {
                    state = format == Format.GZIP ? State.TRAILER : State.DONE;
                    return produced;
                }
                if (inflater.needsDictionary()) {
                    throw fail("preset dictionary not supported");
                }
                if (inflater.needsInput()) {
                    return produced > 0 ? produced : -1;
                }
                throw fail("decoder stalled (expected: valid " + name() + ")");
            }
            return produced;
        } catch (DataFormatException e) {
            throw fail("corrupt data (expected: valid " + name() + ")");
        }
    }

    private void checkTrailer(byte[] d, int pos) throws ResponseDecodeException {
        long crcValue = le32(d, pos);
        long size = le32(d, pos + 4);
        if (crcValue != crc.getValue() || size != (memberSize & 0xFFFFFFFFL)) {
            throw fail("checksum mismatch in the gzip trailer");
        }
    }

    private static long le32(byte[] d, int p) {
        return (d[p] & 0xFFL) | (d[p + 1] & 0xFFL) << 8 | (d[p + 2] & 0xFFL) << 16 | (d[p + 3] & 0xFFL) << 24;
    }

    private ResponseDecodeException fail(String what) {
        return new ResponseDecodeException("response body (" + name() + "): " + what);
    }

    @Override
    public void close() {
        if (inflater != null) {
            inflater.end();
            inflater = null;
        }
        state = State.DONE;
    }
}
