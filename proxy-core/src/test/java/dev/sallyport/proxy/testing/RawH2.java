package dev.sallyport.proxy.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2Headers;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

/**
 * An attacker's HTTP/2 client: a CONNECT tunnel with TLS inside (ALPN {@code h2}), then frames written byte by
 * byte. Header blocks are HPACK literals without indexing or Huffman coding, so any name, value or order can be
 * sent, malformed on purpose. What the proxy answers is read frame by frame; its header blocks are decoded with
 * Netty's HPACK decoder (the reading side only).
 */
public final class RawH2 implements AutoCloseable {

    public static final int DATA = 0x0, HEADERS = 0x1, RST_STREAM = 0x3, SETTINGS = 0x4, PING = 0x6, GOAWAY = 0x7,
            WINDOW_UPDATE = 0x8, CONTINUATION = 0x9;
    public static final int END_STREAM = 0x1, END_HEADERS = 0x4, ACK = 0x1;

    /** One frame as read. {@code headers} is set for HEADERS frames (decoded). */
    public record Frame(int type, int flags, int stream, byte[] payload, Http2Headers headers) {
        public boolean endStream() {
            return (flags & END_STREAM) != 0 && (type == DATA || type == HEADERS);
        }

        /** The error code of a RST_STREAM or GOAWAY frame. */
        public int errorCode() {
            int at = type == GOAWAY ? 4 : 0;
            return ((payload[at] & 0xff) << 24) | ((payload[at + 1] & 0xff) << 16) | ((payload[at + 2] & 0xff) << 8)
                    | (payload[at + 3] & 0xff);
        }
    }

    /** What one stream got: its response headers (null if none), body, trailers, and whether it was reset. */
    public record StreamResult(Http2Headers headers, String body, Http2Headers trailers, Integer resetCode,
                               boolean connectionClosed) {
        public String status() {
            return headers == null ? null : String.valueOf(headers.status());
        }
    }

    private final SSLSocket tls;
    private final OutputStream out;
    private final DataInputStream in;
    private final DefaultHttp2HeadersDecoder decoder = new DefaultHttp2HeadersDecoder(false);
    private final List<Frame> seen = new ArrayList<>();
    private boolean closed;

    private RawH2(SSLSocket tls) throws IOException {
        this.tls = tls;
        this.out = tls.getOutputStream();
        this.in = new DataInputStream(tls.getInputStream());
    }

    /** Tunnel, TLS with ALPN h2 (fails unless the proxy chose it), the preface and an empty SETTINGS frame. */
    public static RawH2 open(InetSocketAddress proxy, String host, int port, SSLContext trust) {
        return open(proxy, host, port, trust, 0);
    }

    /** Like {@link #open}, with a receive buffer of {@code receiveBuffer} bytes (0: the default): a slow reader. */
    public static RawH2 open(InetSocketAddress proxy, String host, int port, SSLContext trust, int receiveBuffer) {
        try {
            SSLSocket tls = RawConnection.tunnelSocket(proxy, host, port, trust, List.of("h2"), receiveBuffer);
            tls.setSoTimeout(10_000);
            if (!"h2".equals(tls.getApplicationProtocol())) {
                tls.close();
                throw new IllegalStateException("ALPN chose '" + tls.getApplicationProtocol() + "', not h2");
            }
            RawH2 c = new RawH2(tls);
            c.out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            c.frame(SETTINGS, 0, 0, new byte[0]);
            return c;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A header block of HPACK literals without indexing, in the order given: name, value, name, value, ... */
    public static byte[] block(String... namesAndValues) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            b.write(0x00);
            string(b, namesAndValues[i]);
            string(b, namesAndValues[i + 1]);
        }
        return b.toByteArray();
    }

    private static void string(ByteArrayOutputStream b, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.ISO_8859_1);
        integer(b, bytes.length, 7, 0);
        b.writeBytes(bytes);
    }

    private static void integer(ByteArrayOutputStream b, int value, int prefixBits, int flags) {
        int max = (1 << prefixBits) - 1;
        if (value < max) {
            b.write(flags | value);
            return;
        }
        b.write(flags | max);
        value -= max;
        while (value >= 128) {
            b.write((value & 0x7f) | 0x80);
            value >>>= 7;
        }
        b.write(value);
    }

    /** The usual request pseudo-headers for {@code authority}, then {@code extra} name/value pairs. */
    public static String[] request(String method, String authority, String path, String... extra) {
        List<String> all = new ArrayList<>(List.of(":method", method, ":scheme", "https", ":authority", authority,
                ":path", path));
        all.addAll(List.of(extra));
        return all.toArray(String[]::new);
    }

    public RawH2 headers(int stream, boolean endStream, String... namesAndValues) {
        return frame(HEADERS, END_HEADERS | (endStream ? END_STREAM : 0), stream, block(namesAndValues));
    }

    public RawH2 data(int stream, boolean endStream, byte[] payload) {
        return frame(DATA, endStream ? END_STREAM : 0, stream, payload);
    }

    /** A SETTINGS frame with one parameter ({@code id} as in RFC 9113 6.5.2). */
    public RawH2 settings(int id, int value) {
        return frame(SETTINGS, 0, 0, setting(id, value));
    }

    /** One SETTINGS parameter: the payload of a SETTINGS frame that sets only it. */
    public static byte[] setting(int id, int value) {
        byte[] v = int32(value);
        return new byte[] {(byte) (id >>> 8), (byte) id, v[0], v[1], v[2], v[3]};
    }

    public RawH2 windowUpdate(int stream, int increment) {
        return frame(WINDOW_UPDATE, 0, stream, int32(increment));
    }

    public RawH2 rst(int stream, int code) {
        return frame(RST_STREAM, 0, stream, int32(code));
    }

    public static byte[] int32(int v) {
        return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
    }

    public RawH2 frame(int type, int flags, int stream, byte[] payload) {
        return frames(1, type, flags, stream, payload);
    }

    /** {@code count} copies of one frame in a single write: a flood at the speed of the socket, not of TLS records. */
    public RawH2 frames(int count, int type, int flags, int stream, byte[] payload) {
        byte[] head = {(byte) (payload.length >>> 16), (byte) (payload.length >>> 8), (byte) payload.length,
            (byte) type, (byte) flags, (byte) (stream >>> 24), (byte) (stream >>> 16), (byte) (stream >>> 8),
            (byte) stream};
        ByteArrayOutputStream all = new ByteArrayOutputStream(count * (head.length + payload.length));
        for (int i = 0; i < count; i++) {
            all.writeBytes(head);
            all.writeBytes(payload);
        }
        try {
            all.writeTo(out);
            out.flush();
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The next frame (SETTINGS from the proxy acknowledged on the way), or null at the end of the connection. */
    public Frame next() {
        if (closed) {
            return null;
        }
        try {
            return read();
        } catch (EOFException | SocketTimeoutException e) {
            closed = true;
            return null;
        } catch (IOException e) {
            closed = true;     // reset by the proxy
            return null;
        }
    }

    /**
     * Waits up to {@code quiet} for a frame: true when none came (the connection is still open), false when one came
     * (kept in {@link #seen}) or the connection ended. An attacker's clock: it sends its next byte when this is true.
     */
    public boolean quietFor(java.time.Duration quiet) {
        if (closed) {
            return false;
        }
        try {
            tls.setSoTimeout((int) quiet.toMillis());
            try {
                read();
                return false;
            } finally {
                tls.setSoTimeout(10_000);
            }
        } catch (SocketTimeoutException e) {
            return true;
        } catch (IOException e) {
            closed = true;
            return false;
        }
    }

    private Frame read() throws IOException {
        int length = in.readUnsignedByte() << 16 | in.readUnsignedByte() << 8 | in.readUnsignedByte();
        int type = in.readUnsignedByte();
        int flags = in.readUnsignedByte();
        int stream = in.readInt() & 0x7fffffff;
        byte[] payload = new byte[length];
        in.readFully(payload);
        Http2Headers headers = null;
        if (type == HEADERS) {
            ByteBuf block = Unpooled.wrappedBuffer(payload);
            try {
                headers = decoder.decodeHeaders(stream, block);
            } catch (Http2Exception e) {
                throw new IllegalStateException("the proxy's header block does not decode: " + e.getMessage(), e);
            }
        }
        if (type == SETTINGS && (flags & ACK) == 0) {
            try {
                frame(SETTINGS, ACK, 0, new byte[0]);
            } catch (UncheckedIOException gone) {
                // the proxy closed its side; what it sent before is still read
            }
        }
        Frame f = new Frame(type, flags, stream, payload, headers);
        seen.add(f);
        return f;
    }

    /** Reads until {@code stream} ends (END_STREAM or RST_STREAM), the connection ends (GOAWAY or EOF). */
    public StreamResult await(int stream) {
        Http2Headers headers = null;
        Http2Headers trailers = null;
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (Frame f : seen) {
            if (f.stream() == stream && f.type() == RST_STREAM) {
                return new StreamResult(headers, body.toString(StandardCharsets.UTF_8), null, f.errorCode(), false);
            }
        }
        for (Frame f; (f = next()) != null; ) {
            if (f.type() == GOAWAY) {
                return new StreamResult(headers, body.toString(StandardCharsets.UTF_8), trailers, null, true);
            }
            if (f.stream() != stream) {
                continue;
            }
            switch (f.type()) {
                case HEADERS -> {
                    if (headers == null) {
                        headers = f.headers();
                    } else {
                        trailers = f.headers();
                    }
                }
                case DATA -> body.writeBytes(f.payload());
                case RST_STREAM -> {
                    return new StreamResult(headers, body.toString(StandardCharsets.UTF_8), trailers, f.errorCode(),
                            false);
                }
                default -> { }
            }
            if (f.endStream()) {
                return new StreamResult(headers, body.toString(StandardCharsets.UTF_8), trailers, null, false);
            }
        }
        return new StreamResult(headers, body.toString(StandardCharsets.UTF_8), trailers, null, true);
    }

    /** Reads until the connection ends; the GOAWAY frame if one came. */
    public Frame awaitGoaway() {
        for (Frame f; (f = next()) != null; ) {
            if (f.type() == GOAWAY) {
                return f;
            }
        }
        return null;
    }

    /** The client as the proxy's audit records name it ({@code ip:port} of this connection). */
    public String client() {
        return "127.0.0.1:" + tls.getLocalPort();
    }

    /** True once the proxy ended the connection (EOF or reset). */
    public boolean closed() {
        return closed;
    }

    /** Every frame read so far. */
    public List<Frame> seen() {
        return List.copyOf(seen);
    }

    @Override
    public void close() {
        try {
            tls.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
