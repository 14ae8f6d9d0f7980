package dev.sallyport.proxy.testing;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/** RFC 6455 frames written and read byte by byte, so a test controls every header bit, length form and mask. */
public final class WsFrames {

    public static final int CONTINUATION = 0;
    public static final int TEXT = 1;
    public static final int BINARY = 2;
    public static final int CLOSE = 8;
    public static final int PING = 9;
    public static final int PONG = 10;

    private WsFrames() {}

    /** One frame as read: header bits, opcode, whether it was masked, and the (unmasked) payload. */
    public record Frame(boolean fin, int rsv, int opcode, boolean masked, byte[] payload) {
        public String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }

        /** The status code of a close frame, or -1 when it has none. */
        public int closeCode() {
            return payload.length < 2 ? -1 : ((payload[0] & 0xFF) << 8) | (payload[1] & 0xFF);
        }
    }

    /** A server frame (unmasked). */
    public static byte[] frame(boolean fin, int opcode, byte[] payload) {
        return frame(fin, 0, opcode, payload, null);
    }

    public static byte[] text(boolean fin, int opcode, String payload) {
        return frame(fin, opcode, payload.getBytes(StandardCharsets.UTF_8));
    }

    /** A client frame, masked with {@code key} (4 bytes). */
    public static byte[] masked(boolean fin, int opcode, byte[] payload, byte[] key) {
        return frame(fin, 0, opcode, payload, key);
    }

    /** Any frame: {@code rsv} is the three reserved bits (0-7); {@code key} null for an unmasked frame. */
    public static byte[] frame(boolean fin, int rsv, int opcode, byte[] payload, byte[] key) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write((fin ? 0x80 : 0) | rsv << 4 | opcode);
        int mask = key == null ? 0 : 0x80;
        if (payload.length < 126) {
            out.write(mask | payload.length);
        } else if (payload.length < 65536) {
            out.write(mask | 126);
            out.write(payload.length >>> 8);
            out.write(payload.length & 0xFF);
        } else {
            out.write(mask | 127);
            for (int shift = 56; shift >= 0; shift -= 8) {
                out.write((int) ((long) payload.length >>> shift) & 0xFF);
            }
        }
        if (key != null) {
            out.writeBytes(key);
        }
        for (int i = 0; i < payload.length; i++) {
            out.write(key == null ? payload[i] : payload[i] ^ key[i % 4]);
        }
        return out.toByteArray();
    }

    /** A close frame with a status code (no reason). */
    public static byte[] close(int code, byte[] key) {
        return frame(true, 0, CLOSE, new byte[] {(byte) (code >>> 8), (byte) code}, key);
    }

    /** Reads one frame (any length form), unmasking a masked payload. */
    public static Frame read(InputStream in) throws IOException {
        int b0 = readByte(in);
        int b1 = readByte(in);
        long len = b1 & 0x7F;
        if (len == 126) {
            len = (long) readByte(in) << 8 | readByte(in);
        } else if (len == 127) {
            len = 0;
            for (int i = 0; i < 8; i++) {
                len = len << 8 | readByte(in);
            }
        }
        byte[] key = null;
        if ((b1 & 0x80) != 0) {
            key = in.readNBytes(4);
        }
        if (len > 16 * 1024 * 1024) {
            throw new IOException("frame of " + len + " bytes (expected: a test-sized frame)");
        }
        byte[] payload = in.readNBytes((int) len);
        if (payload.length != len) {
            throw new EOFException("frame payload cut at " + payload.length + " of " + len + " bytes");
        }
        if (key != null) {
            for (int i = 0; i < payload.length; i++) {
                payload[i] ^= key[i % 4];
            }
        }
        return new Frame((b0 & 0x80) != 0, (b0 >> 4) & 7, b0 & 0x0F, key != null, payload);
    }

    private static int readByte(InputStream in) throws IOException {
        int b = in.read();
        if (b < 0) {
            throw new EOFException("connection closed before a whole frame");
        }
        return b;
    }

    /** {@code Sec-WebSocket-Accept} for a client's key. */
    public static String accept(String key) {
        try {
            byte[] sha = MessageDigest.getInstance("SHA-1").digest((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")
                    .getBytes(StandardCharsets.US_ASCII));
            return Base64.getEncoder().encodeToString(sha);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The head of a {@code 101} accepting {@code request}'s key, with {@code extra} header lines (CRLF-ended). */
    public static byte[] switching(ScriptedUpstream.Connection request, String extra) {
        return ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: " + accept(request.header("Sec-WebSocket-Key")) + "\r\n" + extra + "\r\n")
                .getBytes(StandardCharsets.ISO_8859_1);
    }
}
