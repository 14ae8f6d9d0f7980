package dev.sallyport.testing.upstream;

import dev.sallyport.testing.HttpReads;
import dev.sallyport.testing.TestServerSockets;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PushbackInputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A keep-alive HTTP/1.1 server on {@code 127.0.0.1:0} (plain, or TLS with a given chain) that parses the way sloppy
 * backends do: whatever framing headers it sees, it obeys ({@code Transfer-Encoding} containing {@code chunked},
 * else {@code Content-Length}, else no body), and every request it reads is recorded with the connection it came
 * on. What it answers is a {@link Responder}'s: by default {@code 200} with the body
 * {@code conn=C n=N REQUEST-LINE}. Attack tests count what the upstream parsed: a request that the proxy
 * forwarded as one but that this server read as two is a smuggling bug.
 *
 * <p>JDK sockets, one virtual thread per connection, 10 s socket timeout.
 */
public final class LenientUpstream implements AutoCloseable {

    /** One request as this server parsed it. {@code n} counts requests on its connection from 1. */
    public record Received(int connection, int n, String head, byte[] body, List<String> trailers) {

        public String requestLine() {
            int end = head.indexOf("\r\n");
            return end < 0 ? head : head.substring(0, end);
        }

        /** The first value of header {@code name} (case-insensitive), or null. */
        public String header(String name) {
            return HttpReads.header(head, name);
        }

        public String bodyText() {
            return new String(body, StandardCharsets.ISO_8859_1);
        }
    }

    /** Writes the answer to one request; may write anything (several responses, a partial one) or nothing. */
    @FunctionalInterface
    public interface Responder {
        void respond(Received request, Conversation connection) throws IOException;
    }

    /** The connection a request came on, as its {@link Responder} sees it. */
    public static final class Conversation {
        private final PushbackInputStream in;
        private final OutputStream out;

        Conversation(PushbackInputStream in, OutputStream out) {
            this.in = in;
            this.out = out;
        }

        public OutputStream out() {
            return out;
        }

        /** Blocks until the proxy sends another byte on this connection (a slow answer); false if it closed. */
        public boolean awaitMoreInput() throws IOException {
            int b = in.read();
            if (b < 0) {
                return false;
            }
            in.unread(b);
            return true;
        }

        public void write(byte[] bytes) throws IOException {
            out.write(bytes);
            out.flush();
        }
    }

    private final ServerSocket server;
    private final Responder responder;
    private final Thread acceptor;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private final AtomicInteger connections = new AtomicInteger();
    private final ByteArrayOutputStream raw = new ByteArrayOutputStream();

    private LenientUpstream(ServerSocket server, Responder responder) {
        this.server = server;
        this.responder = responder;
        this.acceptor = Thread.ofPlatform().daemon().name("lenient-upstream").start(this::acceptLoop);
    }

    /** A plain-HTTP server answering with {@code responder}. */
    public static LenientUpstream http(Responder responder) throws IOException {
        return new LenientUpstream(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()), responder);
    }

    /** An HTTPS server presenting {@code chain}, answering with {@code responder}. */
    public static LenientUpstream https(PrivateKey key, X509Certificate[] chain, Responder responder) {
        return new LenientUpstream(TestServerSockets.tls(key, chain), responder);
    }

    /** The default answer: {@code 200}, keep-alive, body {@code conn=C n=N REQUEST-LINE}. */
    public static void echo(Received request, Conversation connection) throws IOException {
        connection.write(response(200, echoBody(request)));
    }

    /** The body {@link #echo} answers with. */
    public static String echoBody(Received request) {
        return "conn=" + request.connection() + " n=" + request.n() + " " + request.requestLine();
    }

    /** A complete keep-alive response with a Content-Length body. */
    public static byte[] response(int status, String body) {
        byte[] b = body.getBytes(StandardCharsets.ISO_8859_1);
        return ("HTTP/1.1 " + status + " X\r\nContent-Length: " + b.length + "\r\n\r\n" + body)
                .getBytes(StandardCharsets.ISO_8859_1);
    }

    public int port() {
        return server.getLocalPort();
    }

    /** Every request parsed so far, in order of arrival. */
    public List<Received> received() {
        return List.copyOf(received);
    }

    /**
     * Every byte any connection has sent this server so far, as it arrived (also what was never a whole request:
     * a body cut off, a head without its end).
     */
    public String rawReceived() {
        synchronized (raw) {
            return raw.toString(StandardCharsets.ISO_8859_1);
        }
    }

    /** Copies what is read into {@link #raw}. */
    private final class Tee extends java.io.FilterInputStream {
        Tee(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                synchronized (raw) {
                    raw.write(b);
                }
            }
            return b;
        }

        @Override
        public int read(byte[] buf, int off, int len) throws IOException {
            int n = super.read(buf, off, len);
            if (n > 0) {
                synchronized (raw) {
                    raw.write(buf, off, n);
                }
            }
            return n;
        }
    }

    /** Connections accepted so far. */
    public int connections() {
        return connections.get();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                open.add(socket);
                int id = connections.incrementAndGet();
                Thread.ofVirtual().name("lenient-upstream-" + id).start(() -> serve(socket, id));
            } catch (IOException e) {
                if (server.isClosed()) {
                    return;
                }
            }
        }
    }

    private void serve(Socket socket, int id) {
        try (socket) {
            socket.setSoTimeout(10_000);
            PushbackInputStream in = new PushbackInputStream(new Tee(socket.getInputStream()), 1);
            Conversation conversation = new Conversation(in, socket.getOutputStream());
            for (int n = 1; ; n++) {
                String head = HttpReads.readHead(in);
                if (head == null) {
                    return;
                }
                head = head.substring(0, head.length() - 4);
                List<String> trailers = new java.util.ArrayList<>();
                Received request = new Received(id, n, head, body(in, head, trailers), List.copyOf(trailers));
                received.add(request);
                responder.respond(request, conversation);
            }
        } catch (IOException e) {
            // the proxy dropped the connection: what the test asserts on is what was received
        } finally {
            open.remove(socket);
        }
    }

    private static byte[] body(InputStream in, String head, List<String> trailers) throws IOException {
        String te = null;
        for (String line : head.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase("transfer-encoding")) {
                te = line.substring(colon + 1).toLowerCase(Locale.ROOT);
            }
        }
        if (te != null && te.contains("chunked")) {
            return HttpReads.readChunked(in, trailers);
        }
        return HttpReads.readBody(in, head);
    }

    @Override
    public void close() {
        TestServerSockets.close(server, open, acceptor);
    }

    @Override
    public String toString() {
        return "LenientUpstream[127.0.0.1:" + port() + "]";
    }
}
