package dev.sallyport.testing.tools;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsServer;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.TestServerSockets;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * An HTTPS site on {@code 127.0.0.1:0} for real tools to talk to (curl, git, npm, pip, Maven): the JDK's
 * {@link HttpsServer} presenting one certificate chain, a handler per path prefix, one virtual thread per
 * exchange. Every request is recorded (method, raw request target, headers, body) before its handler runs, so
 * a test can say what reached the upstream and what did not. Close it to stop it.
 *
 * <pre>{@code
 * try (HttpsSite site = HttpsSite.start(pki.issue("files.example.test"))) {
 *     site.route("/", exchange -> HttpsSite.respond(exchange, 200, "text/plain", "hello".getBytes(UTF_8)));
 *     ...
 * }
 * }</pre>
 */
public final class HttpsSite implements AutoCloseable {
    /** The most of a request body a site reads (a git push of a small repository, a JSON chat request). */
    public static final int MAX_BODY = 16 << 20;

    /**
     * One request as the site received it.
     *
     * @param method  the request method
     * @param target  the raw request target (path and query, percent-encoding as sent)
     * @param headers header values by lower-case name
     * @param body    the body as read (chunked framing removed, content encoding kept)
     */
    public record Request(String method, String target, Map<String, List<String>> headers, byte[] body) {
        public Request {
            headers = Map.copyOf(headers);
            body = body.clone();
        }

        /** The first value of header {@code name}, or the empty string. */
        public String header(String name) {
            List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
            return values == null || values.isEmpty() ? "" : values.getFirst();
        }

        /** The body as UTF-8 text. */
        public String bodyText() {
            return new String(body, StandardCharsets.UTF_8);
        }

        @Override
        public byte[] body() {
            return body.clone();
        }
    }

    private final HttpServer server;
    private final ExecutorService executor;
    private final List<Request> requests = new CopyOnWriteArrayList<>();

    private HttpsSite(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    /** Starts a site on 127.0.0.1 (ephemeral port) presenting {@code leaf}'s chain; it has no routes yet (404). */
    public static HttpsSite start(TestPki.Issued leaf) {
        try {
            HttpsServer server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
            server.setHttpsConfigurator(new HttpsConfigurator(
                    TestServerSockets.serverContext(leaf.key(), leaf.chain())));
            ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
            server.setExecutor(executor);
            server.start();
            return new HttpsSite(server, executor);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start a test HTTPS site", e);
        }
    }

    /** Starts the same site in cleartext HTTP, for tests of plain {@code http://} traffic. */
    public static HttpsSite plain() {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
            ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
            server.setExecutor(executor);
            server.start();
            return new HttpsSite(server, executor);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start a test HTTP site", e);
        }
    }

    /** Sends requests whose path starts with {@code prefix} (the longest prefix wins) to {@code handler}. */
    public HttpsSite route(String prefix, HttpHandler handler) {
        HttpContext context = server.createContext(prefix, handler);
        context.getFilters().add(new Recorder());
        return this;
    }

    /** The bound port. */
    public int port() {
        return server.getAddress().getPort();
    }

    /** Every request received so far, in arrival order. */
    public List<Request> requests() {
        return List.copyOf(requests);
    }

    /**
     * Answers {@code status} with {@code body} ({@code Content-Length}, no body for an empty one) and closes the
     * exchange.
     */
    public static void respond(HttpExchange exchange, int status, String contentType, byte[] body)
            throws IOException {
        try (exchange) {
            if (!contentType.isEmpty()) {
                exchange.getResponseHeaders().set("Content-Type", contentType);
            }
            boolean head = "HEAD".equals(exchange.getRequestMethod());
            exchange.sendResponseHeaders(status, head || body.length == 0 ? -1 : body.length);
            if (!head && body.length > 0) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            }
        }
    }

    /** {@link #respond} with a plain-text body. */
    public static void respond(HttpExchange exchange, int status, String text) throws IOException {
        respond(exchange, status, "text/plain; charset=utf-8", text.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

    /** Reads the whole body (up to {@link #MAX_BODY}), records the request, and hands the handler a copy. */
    private final class Recorder extends Filter {
        @Override
        public void doFilter(HttpExchange exchange, Chain chain) throws IOException {
            byte[] body;
            try (InputStream in = exchange.getRequestBody()) {
                body = in.readNBytes(MAX_BODY + 1);
            }
            if (body.length > MAX_BODY) {
                respond(exchange, 413, "body over " + MAX_BODY + " bytes\n");
                return;
            }
            Map<String, List<String>> headers = new TreeMap<>();
            exchange.getRequestHeaders().forEach((name, values) ->
                    headers.put(name.toLowerCase(Locale.ROOT), List.copyOf(values)));
            requests.add(new Request(exchange.getRequestMethod(), exchange.getRequestURI().getRawPath()
                    + (exchange.getRequestURI().getRawQuery() == null ? ""
                    : "?" + exchange.getRequestURI().getRawQuery()), headers, body));
            exchange.setStreams(new ByteArrayInputStream(body), null);
            chain.doFilter(exchange);
        }

        @Override
        public String description() {
            return "records every request";
        }
    }
}
