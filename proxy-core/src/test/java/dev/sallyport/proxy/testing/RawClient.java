package dev.sallyport.proxy.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/** Sends exact bytes to the proxy and reads everything until the proxy closes (bounded by a timeout). */
public final class RawClient {

    private RawClient() {}

    public static String exchange(InetSocketAddress proxy, String request) {
        try (Socket s = new Socket()) {
            s.connect(proxy, 5000);
            s.setSoTimeout(5000);
            s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
            return readAll(s.getInputStream());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads a response head up to and including its empty line (or to the end of the stream). */
    public static String readHead(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.append((char) b);
        }
        return head.toString();
    }

    public static String readAll(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        try {
            for (int n; out.size() < 1 << 20 && (n = in.read(buf)) > 0; ) {
                out.write(buf, 0, n);
            }
        } catch (SocketTimeoutException e) {
            out.write("<timeout>".getBytes(StandardCharsets.US_ASCII));
        }
        return out.toString(StandardCharsets.ISO_8859_1);
    }
}
