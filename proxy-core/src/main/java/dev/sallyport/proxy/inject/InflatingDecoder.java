package dev.sallyport.proxy.inject;

import java.util.Arrays;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * Streaming gzip (RFC 1952, concatenated members allowed) and deflate (zlib-wrapped, or raw deflate as
 * some servers send it) decoding with a hard cap on the decoded size. Input arrives in arbitrary pieces;
 * decoded bytes go to a {@link Sink} in pieces of at most 16 KiB. Not thread-safe; {@link #close()}
 * frees the native inflater.
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
    private byte[] pending = new byte[0];
    private long decoded;
    private long memberSize;

    InflatingDecoder(Format format, long maxDecoded) {
        this.format = format;
        this.maxDecoded = maxDecoded;
    }

    String name() {
        return format == Format.GZIP ? "gzip" : "deflate";
    }

    void decode(byte[] in, int offset, int length, Sink sink) throws ResponseDecodeException {
        byte[] data = in;
        int pos = offset;
        int end = offset + length;
        if (pending.length > 0) {
            data = new byte[pending.length + length];
            System.arraycopy(pending, 0, data, 0, pending.length);
            System.arraycopy(in, offset, data, pending.length, length);
            pos = 0;
            end = data.length;
            pending = new byte[0];
        }
        while (pos < end) {
            switch (state) {
                case HEADER, MEMBER_END -> {
                    int used = startMember(data, pos, end);
                    if (used < 0) {
                        keep(data, pos, end);
                        return;
                    }
                    pos += used;
                }
                case INFLATE -> pos = inflate(data, pos, end, sink);
                case TRAILER -> {
                    if (end - pos < 8) {
                        keep(data, pos, end);
                        return;
                    }
                    checkTrailer(data, pos);
                    pos += 8;
                    state = State.MEMBER_END;
                }
                case DONE -> throw fail("data after the end of the stream");
            }
        }
    }

    /** Checks the stream ended at a boundary; a truncated body is an error. */
    void finish() throws ResponseDecodeException {
        boolean complete = format == Format.GZIP ? state == State.MEMBER_END : state == State.DONE;
        if (!complete || pending.length > 0) {
            throw fail("stream ended early (expected: a complete " + name() + " stream)");
        }
    }

    private void keep(byte[] data, int pos, int end) throws ResponseDecodeException {
        if (end - pos > MAX_GZIP_HEADER) {
            throw fail("header longer than " + MAX_GZIP_HEADER + " bytes");
        }
        pending = Arrays.copyOfRange(data, pos, end);
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

    private int inflate(byte[] d, int pos, int end, Sink sink) throws ResponseDecodeException {
        inflater.setInput(d, pos, end - pos);
        try {
            while (true) {
                int n = inflater.inflate(out);
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
                    continue;
                }
                if (inflater.finished()) {
                    int rest = inflater.getRemaining();
                    state = format == Format.GZIP ? State.TRAILER : State.DONE;
                    return end - rest;
                }
                if (inflater.needsDictionary()) {
                    throw fail("preset dictionary not supported");
                }
                if (inflater.needsInput()) {
                    return end;
                }
                throw fail("decoder stalled (expected: valid " + name() + ")");
            }
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
