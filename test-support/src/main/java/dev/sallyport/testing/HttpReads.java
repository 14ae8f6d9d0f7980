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

    /** Reads a chunked body (trailer fields read and dropped), up to {@link #MAX_BODY}. */
    public static byte[] readChunked(InputStream in) throws IOException {
        return readChunked(in, new java.util.ArrayList<>());
    }

    /** Reads a chunked body up to {@link #MAX_BODY}; its trailer field lines are added to {@code trailers}. */
    public static byte[] readChunked(InputStream in, java.util.List<String> trailers) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (body.size() <= MAX_BODY) {
            String line = readLine(in);
            int semi = line.indexOf(';');
            int size = Integer.parseInt((semi < 0 ? line : line.substring(0, semi)).trim(), 16);
            if (size == 0) {
                for (String field = readLine(in); !field.isEmpty(); field = readLine(in)) {
                    trailers.add(field);
                }
                return body.toByteArray();
            }
            body.write(in.readNBytes(size));
            readLine(in);
        }
        throw new IOException("chunked body over " + MAX_BODY + " bytes");
    }

    /** One line without its CRLF (or bare LF), at most 8 KiB; fails if the peer closes first. */
    public static String readLine(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int b; (b = in.read()) >= 0; ) {
            if (b == '\n') {
                int len = sb.length();
                return len > 0 && sb.charAt(len - 1) == '\r' ? sb.substring(0, len - 1) : sb.toString();
            }
            if (sb.length() > 8192) {
                throw new IOException("line over 8192 bytes");
            }
            sb.append((char) b);
        }
        throw new IOException("connection closed in the middle of a line");
    }

    /** The first value of header {@code name} (case-insensitive) in a message head, or null. */
    public static String header(String head, String name) {
        for (String line : head.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name)) {
                return line.substring(colon + 1).trim();
            }
        }
        return null;
    }
}
