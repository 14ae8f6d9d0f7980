package dev.sallyport.proxy.testing;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Hand-built TLS ClientHellos for attacks on the tunnel's first bytes: a plausible hello naming {@code sni},
 * padded to any size and cut into records of any size, or with a lying length.
 */
public final class ClientHellos {

    private ClientHellos() {}

    /** The ClientHello handshake message (type, 3-byte length, body) naming sni with padding bytes of padding. */
    public static byte[] handshake(String sni, int padding) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(new byte[] {3, 3});
        body.writeBytes(new byte[32]);                       // random
        body.write(0);                                       // no session id
        body.writeBytes(new byte[] {0, 6, 0x13, 0x01, 0x13, 0x02, (byte) 0xc0, 0x2f});
        body.writeBytes(new byte[] {1, 0});                  // compression: null
        ByteArrayOutputStream ext = new ByteArrayOutputStream();
        byte[] name = sni.getBytes(StandardCharsets.US_ASCII);
        extension(ext, 0x0000, concat(u16(name.length + 3), new byte[] {0}, u16(name.length), name));
        extension(ext, 0x002b, new byte[] {4, 3, 4, 3, 3});  // supported_versions: 1.3, 1.2
        if (padding > 0) {
            extension(ext, 0x0015, new byte[padding]);
        }
        byte[] extensions = ext.toByteArray();
        body.writeBytes(u16(extensions.length));
        body.writeBytes(extensions);
        byte[] b = body.toByteArray();
        return concat(new byte[] {1}, u24(b.length), b);
    }

    /** message cut into handshake records of at most recordSize bytes each. */
    public static byte[] records(byte[] message, int recordSize) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int at = 0; at < message.length; at += recordSize) {
            int n = Math.min(recordSize, message.length - at);
            out.writeBytes(new byte[] {0x16, 3, 1});
            out.writeBytes(u16(n));
            out.write(message, at, n);
        }
        return out.toByteArray();
    }

    private static void extension(ByteArrayOutputStream out, int type, byte[] data) {
        out.writeBytes(u16(type));
        out.writeBytes(u16(data.length));
        out.writeBytes(data);
    }

    public static byte[] u16(int v) {
        return new byte[] {(byte) (v >> 8), (byte) v};
    }

    public static byte[] u24(int v) {
        return new byte[] {(byte) (v >> 16), (byte) (v >> 8), (byte) v};
    }

    public static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }
}
