package dev.sallyport.proxy.testing;

import dev.sallyport.testing.Trust;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import javax.net.ssl.SSLSocket;

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

    /**
     * CONNECT to {@code host:port} ({@code [v6]} in brackets), TLS with the proxy trusting only {@code trust},
     * then {@code request} inside the tunnel; returns everything the proxy answered inside it. Fails if the
     * CONNECT is not answered 200.
     */
    public static String throughTunnel(InetSocketAddress proxy, Trust trust, String host, int port, String request) {
        try (Socket raw = new Socket()) {
            raw.connect(proxy, 5000);
            raw.setSoTimeout(5000);
            String target = host + ":" + port;
            raw.getOutputStream().write(("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            String reply = readHead(raw.getInputStream());
            if (!reply.startsWith("HTTP/1.1 200")) {
                throw new IllegalStateException("CONNECT " + target + " answered: " + reply.strip());
            }
            String name = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
            try (SSLSocket tls = (SSLSocket) trust.context.getSocketFactory().createSocket(raw, name, port, false)) {
                tls.startHandshake();
                tls.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
                tls.getOutputStream().flush();
                return readAll(tls.getInputStream());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads one response head, byte by byte, up to and including the empty line. */
    public static String readHead(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int b; sb.length() < 16_384 && (sb.length() < 4 || !sb.toString().endsWith("\r\n\r\n"))
                && (b = in.read()) >= 0; ) {
            sb.append((char) b);
        }
        return sb.toString();
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
