package dev.sallyport.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SNIServerName;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

/**
 * A tiny HTTPS server on {@code 127.0.0.1:0} for tests: it serves one key and certificate chain, and answers
 * every request with {@code 200 OK}, the given body and {@code Connection: close}. JDK {@link SSLServerSocket}
 * (TLS 1.2 and 1.3), one virtual thread per connection, bounded reads and a 10 s socket timeout. It records the
 * SNI names clients sent, the raw request heads and the ({@code Content-Length}) bodies it received. Close it (try-with-resources) to stop it.
 */
public final class TlsTestServer implements AutoCloseable {
    private static final int SO_TIMEOUT_MILLIS = 10_000;

    private final SSLServerSocket server;
    private final byte[] response;
    private final Thread acceptor;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final List<String> serverNames = new CopyOnWriteArrayList<>();
    private final List<String> requests = new CopyOnWriteArrayList<>();
    private final List<byte[]> bodies = new CopyOnWriteArrayList<>();
    private final AtomicInteger handshakeFailures = new AtomicInteger();

    private TlsTestServer(SSLServerSocket server, String body) {
        this.server = server;
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        this.response = ("HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "
                + bytes.length + "\r\nConnection: close\r\n\r\n" + body).getBytes(StandardCharsets.UTF_8);
        this.acceptor = Thread.ofPlatform().daemon().name("tls-test-server-" + server.getLocalPort())
                .start(this::acceptLoop);
    }

    /** Starts a server answering {@code ok}. */
    public static TlsTestServer start(PrivateKey key, X509Certificate[] chain) {
        return start(key, chain, "ok");
    }

    /** Starts a server on 127.0.0.1 (ephemeral port) that presents {@code chain} and answers with {@code body}. */
    public static TlsTestServer start(PrivateKey key, X509Certificate[] chain, String body) {
        return new TlsTestServer(TestServerSockets.tls(key, chain), body);
    }

    /** The bound port. */
    public int port() {
        return server.getLocalPort();
    }

    /** The bound address, {@code 127.0.0.1:port}. */
    public InetSocketAddress address() {
        return new InetSocketAddress(server.getInetAddress(), server.getLocalPort());
    }

    /** The SNI host names clients sent, one entry per completed handshake ({@code ""} for none). */
    public List<String> serverNames() {
        return List.copyOf(serverNames);
    }

    /** The request heads (request line and headers, CRLF-separated) received so far. */
    public List<String> requests() {
        return List.copyOf(requests);
    }

    /** The request bodies received (read by {@code Content-Length}; chunked bodies are not read), one per request. */
    public List<byte[]> bodies() {
        return bodies.stream().map(byte[]::clone).toList();
    }

    /** How many TLS handshakes failed (e.g. the client rejected the certificate). */
    public int handshakeFailures() {
        return handshakeFailures.get();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                open.add(socket);
                Thread.ofVirtual().name("tls-test-conn").start(() -> serve((SSLSocket) socket));
            } catch (IOException e) {
                if (server.isClosed()) {
                    return;
                }
            }
        }
    }

    private void serve(SSLSocket socket) {
        try (socket) {
            socket.setSoTimeout(SO_TIMEOUT_MILLIS);
            try {
                socket.startHandshake();
            } catch (IOException e) {
                handshakeFailures.incrementAndGet();
                return;
            }
            serverNames.add(sni(socket));
            String head = HttpReads.readHead(socket.getInputStream());
            if (head == null) {
                return;
            }
            requests.add(head);
            bodies.add(HttpReads.readBody(socket.getInputStream(), head));
            OutputStream out = socket.getOutputStream();
            out.write(response);
            out.flush();
        } catch (SocketException e) {
            // client went away or the server is closing
        } catch (IOException e) {
            // a test client that misbehaves is the test's business; nothing to report here
        } finally {
            open.remove(socket);
        }
    }

    private static String sni(SSLSocket socket) {
        if (socket.getSession() instanceof ExtendedSSLSession session) {
            for (SNIServerName name : session.getRequestedServerNames()) {
                if (name instanceof SNIHostName host) {
                    return host.getAsciiName();
                }
            }
        }
        return "";
    }

    /** Stops accepting, closes open connections and waits (bounded) for the accept thread to end. */
    @Override
    public void close() {
        TestServerSockets.close(server, open, acceptor);
    }

    @Override
    public String toString() {
        return "TlsTestServer[127.0.0.1:" + port() + "]";
    }
}
