package dev.sallyport.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/** Reading HTTP/1.1 requests off a socket, for the test servers: bounded, byte by byte, no parsing library. */
public final class HttpReads {

    /** Largest request head the test servers read. */
    public static final int MAX_HEAD = 64 * 1024;
    /** Largest Content-Length body the test servers read. */
    public static final int MAX_BODY = 1 << 20;

    private HttpReads() {}

    /**
     * Reads up to and including the blank line ending a request head; null if the peer closed first or sent
     * more than {@link #MAX_HEAD} bytes.
     */
    public static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (head.size() < MAX_HEAD) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            head.write(b);
            matched = b == end[matched] ? matched + 1 : b == '\r' ? 1 : 0;
            if (matched == end.length) {
                return head.toString(StandardCharsets.ISO_8859_1);
            }
        }
        return null;
    }

    /** Reads a Content-Length body (up to {@link #MAX_BODY}), so that answering never resets a client still sending. */
    public static byte[] readBody(InputStream in, String head) throws IOException {
        for (String line : head.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase("content-length")) {
                long length = Long.parseLong(line.substring(colon + 1).trim());
                if (length < 0 || length > MAX_BODY) {
                    throw new IOException("request body of " + length + " bytes (expected: at most " + MAX_BODY + ")");
                }
                return in.readNBytes((int) length);
            }
        }
        return new byte[0];
    }
}
