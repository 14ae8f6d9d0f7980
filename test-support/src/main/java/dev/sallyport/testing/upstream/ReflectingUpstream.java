package dev.sallyport.testing.upstream;

import dev.sallyport.testing.HttpReads;
import dev.sallyport.testing.TestServerSockets;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.zip.GZIPOutputStream;
import javax.net.ssl.SSLServerSocket;

/**
 * An HTTPS server on {@code 127.0.0.1:0} that reflects every request back: each request header line becomes a
 * response header {@code X-Echo-N: <line>}, and the body is the request head, then its base64 (standard and
 * URL-safe alphabets), then the request body. The body is sent chunked, <b>one byte per chunk</b>, each flushed
 * on its own TLS record. A path starting with {@code /gzip} sends the body gzip-compressed
 * ({@code Content-Encoding: gzip}) whatever {@code Accept-Encoding} said; {@code /gzip-truncated} sends only
 * the first half of the gzip stream; {@code /br} labels the plain body {@code Content-Encoding: br}. Every response closes the connection.
 * JDK sockets, one virtual thread per connection, 10 s socket timeout. Records the request heads received.
 */
public final class ReflectingUpstream implements AutoCloseable {

    private final SSLServerSocket server;
    private final Thread acceptor;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final List<String> requests = new CopyOnWriteArrayList<>();

    private ReflectingUpstream(SSLServerSocket server) {
        this.server = server;
        this.acceptor = Thread.ofPlatform().daemon().name("reflecting-upstream").start(this::acceptLoop);
    }

    /** Starts a server presenting {@code chain}. */
    public static ReflectingUpstream start(PrivateKey key, X509Certificate[] chain) {
        return new ReflectingUpstream(TestServerSockets.tls(key, chain));
    }

    public int port() {
        return server.getLocalPort();
    }

    /** The request heads received so far (request line and header lines, CRLF-separated). */
    public List<String> requests() {
        return List.copyOf(requests);
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                open.add(socket);
                Thread.ofVirtual().name("reflecting-upstream-conn").start(() -> serve(socket));
            } catch (IOException e) {
                if (server.isClosed()) {
                    return;
                }
            }
        }
    }

    private void serve(Socket socket) {
        try (socket) {
            socket.setSoTimeout(10_000);
            InputStream in = socket.getInputStream();
            String head = HttpReads.readHead(in);
            head = head == null ? null : head.substring(0, head.length() - 4);
            if (head == null) {
                return;
            }
            requests.add(head);
            byte[] body = HttpReads.readBody(in, head);
            respond(socket.getOutputStream(), head, body);
        } catch (IOException e) {
            // the proxy dropped the connection: its business, and the test's
        } finally {
            open.remove(socket);
        }
    }

    private static void respond(OutputStream out, String head, byte[] requestBody) throws IOException {
        String[] lines = head.split("\r\n");
        boolean gzip = lines[0].contains(" /gzip");
        boolean truncated = lines[0].contains(" /gzip-truncated");
        StringBuilder response = new StringBuilder("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n");
        for (int i = 1; i < lines.length; i++) {
            response.append("X-Echo-").append(i).append(": ").append(lines[i]).append("\r\n");
        }
        byte[] headBytes = head.getBytes(StandardCharsets.ISO_8859_1);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(headBytes);
        body.writeBytes(("\n" + Base64.getEncoder().encodeToString(headBytes) + "\n"
                + Base64.getUrlEncoder().encodeToString(headBytes) + "\n").getBytes(StandardCharsets.US_ASCII));
        body.writeBytes(requestBody);
        byte[] payload = body.toByteArray();
        if (gzip) {
            ByteArrayOutputStream compressed = new ByteArrayOutputStream();
            try (GZIPOutputStream z = new GZIPOutputStream(compressed)) {
                z.write(payload);
            }
            payload = compressed.toByteArray();
            if (truncated) {
                payload = java.util.Arrays.copyOf(payload, payload.length / 2);
            }
            response.append("Content-Encoding: gzip\r\n");
        } else if (lines[0].contains(" /br")) {
            response.append("Content-Encoding: br\r\n");
        }
        response.append("Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
        out.write(response.toString().getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        for (byte b : payload) {
            out.write(new byte[] {'1', '\r', '\n', b, '\r', '\n'});
            out.flush();
        }
        out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    @Override
    public void close() {
        TestServerSockets.close(server, open, acceptor);
    }

    @Override
    public String toString() {
        return "ReflectingUpstream[127.0.0.1:" + port() + "]";
    }
}
