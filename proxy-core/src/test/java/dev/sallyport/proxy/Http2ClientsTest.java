package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawH2;
import dev.sallyport.proxy.testing.Upstreams;
import dev.sallyport.testing.Await;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.HttpReads;
import dev.sallyport.testing.Prerequisites;
import dev.sallyport.testing.Trust;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.WebSocket;
import okhttp3.WebSocketListener;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Real HTTP/2 clients through the proxy with {@code proxy.http2: true}: OkHttp with HTTP/2 (and its WebSocket, which
 * falls back to HTTP/1.1 because the proxy offers no extended CONNECT), and nghttp2's {@code nghttp}, which has no
 * proxy support of its own and so goes through a CONNECT bridge the test runs. Each exchange's record says
 * {@code protocol: h2}.
 */
class Http2ClientsTest {

    static Upstreams up;
    static ProxyFixture proxy;
    static Trust trust;
    static String authority;

    @BeforeAll
    static void start() throws Exception {
        up = Upstreams.start("api.test", "127.0.0.1");
        int port = up.tls.port();
        String rules = "  - name: api\n    hosts: [api.test]\n    ports: [" + port + "]\n"
                + "  - name: by-address\n    cidrs: [127.0.0.1/32]\n    ports: [" + port + "]\n";
        proxy = ProxyFixture.start(ProxyFixture.policy(up.root, "api.test:" + port + ", 127.0.0.1:" + port,
                "  http2: true\n", rules), new MapResolver().map("api.test", "127.0.0.1"), up.dir);
        trust = Trust.of(proxy.caPem);
        authority = "api.test:" + port;
    }

    @AfterAll
    static void stop() {
        proxy.close();
        up.close();
    }

    static OkHttpClient okhttp() {
        return new OkHttpClient.Builder().proxy(new java.net.Proxy(java.net.Proxy.Type.HTTP, proxy.address()))
                .sslSocketFactory(trust.context.getSocketFactory(), trust.manager)
                .protocols(List.of(Protocol.HTTP_2, Protocol.HTTP_1_1)).readTimeout(Duration.ofSeconds(20)).build();
    }

    @Test
    void okhttpSpeaksHttp2ThroughTheProxyAndEachStreamIsAuditedAsH2() throws Exception {
        OkHttpClient client = okhttp();
        try (Response r = client.newCall(new Request.Builder().url("https://" + authority + "/okhttp/h2").build())
                .execute()) {
            assertThat(r.protocol()).isEqualTo(Protocol.HTTP_2);
            assertThat(r.code()).isEqualTo(200);
            assertThat(r.body().string()).startsWith("GET /okhttp/h2 host=" + authority);
        }
        AuditFields f = proxy.events.await("exchange", e -> "/okhttp/h2".equals(e.path()));
        assertThat(f.protocol()).isEqualTo("h2");
        assertThat(f.status()).isEqualTo(200);
        client.connectionPool().evictAll();
    }

    @Test
    void okhttpsWebSocketFallsBackToHttp11AndWorksWithHttp2On() throws Exception {
        OkHttpClient client = okhttp();
        BlockingQueue<String> messages = new ArrayBlockingQueue<>(10);
        WebSocket ws = client.newWebSocket(new Request.Builder().url("wss://" + authority + "/ws").build(),
                new WebSocketListener() {
                    @Override
                    public void onOpen(WebSocket webSocket, Response response) {
                        messages.add("open:" + response.protocol());
                    }

                    @Override
                    public void onMessage(WebSocket webSocket, String text) {
                        messages.add(text);
                    }

                    @Override
                    public void onFailure(WebSocket webSocket, Throwable t, Response response) {
                        messages.add("failure: " + t);
                    }
                });
        assertThat(messages.poll(10, TimeUnit.SECONDS)).isEqualTo("open:" + Protocol.HTTP_1_1);
        ws.send("over h1");
        assertThat(messages.poll(10, TimeUnit.SECONDS)).isEqualTo("echo:over h1");
        ws.close(1000, "bye");
        AuditFields upgrade = proxy.events.await("exchange", e -> "/ws".equals(e.path()));
        assertThat(upgrade.status()).isEqualTo(101);
        assertThat(upgrade.protocol()).isEqualTo("http/1.1");
        proxy.events.await("websocket_end", e -> "/ws".equals(e.path()));
        client.connectionPool().evictAll();
    }

    @Test
    void theAdminMetricsCountExchangesByProtocolAndHttp2Streams() throws Exception {
        String before = scrape();
        OkHttpClient h2 = okhttp();
        OkHttpClient h1 = h2.newBuilder().protocols(List.of(Protocol.HTTP_1_1)).build();
        for (OkHttpClient client : List.of(h2, h2, h1)) {
            try (Response r = client.newCall(new Request.Builder().url("https://" + authority + "/metrics/x").build())
                    .execute()) {
                assertThat(r.code()).isEqualTo(200);
            }
        }
        try (RawH2 c = RawH2.open(proxy.address(), "api.test", up.tls.port(), trust.context)) {
            c.headers(1, true, RawH2.request("GET", "other.test:" + up.tls.port(), "/metrics/refused"));
            assertThat(c.await(1).status()).isEqualTo("403");
        }
        h2.connectionPool().evictAll();
        h1.connectionPool().evictAll();
        Await.until("no HTTP/2 stream open", Duration.ofSeconds(10),
                () -> sample(scrape(), "sallyport_h2_streams_active") == 0);
        String after = scrape();
        assertThat(delta(before, after, "sallyport_exchanges_total{protocol=\"h2\"}")).isEqualTo(2);
        assertThat(delta(before, after, "sallyport_exchanges_total{protocol=\"http/1.1\"}")).isEqualTo(1);
        assertThat(delta(before, after, "sallyport_exchange_duration_seconds_count{protocol=\"h2\"}")).isEqualTo(2);
        assertThat(delta(before, after, "sallyport_h2_streams_opened_total")).isEqualTo(3);
        assertThat(delta(before, after, "sallyport_h2_streams_refused_total{reason=\"host_mismatch\"}"))
                .isEqualTo(1);
    }

    /** {@code GET /metrics} on the admin listener. */
    static String scrape() {
        try (HttpClient admin = HttpClient.newHttpClient()) {
            HttpResponse<String> r = admin.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + proxy.proxy.adminAddress().getPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            return r.body();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while scraping /metrics", e);
        }
    }

    static double delta(String before, String after, String name) {
        return sample(after, name) - sample(before, name);
    }

    /** The value of the sample named exactly so, 0 when it is not there (yet). */
    static double sample(String scrape, String name) {
        return scrape.lines().filter(l -> l.startsWith(name + " ")).findFirst()
                .map(l -> Double.parseDouble(l.substring(name.length() + 1))).orElse(0.0);
    }

    @Test
    void nghttpThroughAConnectBridgeIsAuditedAsH2() throws Exception {
        Prerequisites.require("nghttp", nghttpAvailable(), "nghttp on PATH (Debian: apt-get install nghttp2-client)");
        String target = "127.0.0.1:" + up.tls.port();
        try (ConnectBridge bridge = new ConnectBridge(proxy.address(), target)) {
            // nghttp dials the bridge; the tunnel's target is the upstream, so :authority names it (an IP literal:
            // nghttp sends no SNI for one, and the proxy asks for none then)
            ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(30), List.of("nghttp", "-v",
                    "-H", ":authority: " + target, "https://127.0.0.1:" + bridge.port() + "/nghttp/get?x=1"), null);
            assertThat(r.exit()).as(r.stdout() + r.stderr()).isZero();
            assertThat(r.stdout()).contains("The negotiated protocol: h2").contains(":status: 200")
                    .contains("GET /nghttp/get?x=1 host=" + target);
        }
        AuditFields f = proxy.events.await("exchange", e -> "/nghttp/get".equals(e.path()));
        assertThat(f.protocol()).isEqualTo("h2");
        assertThat(f.host()).isEqualTo("127.0.0.1");
        assertThat(f.status()).isEqualTo(200);
    }

    static boolean nghttpAvailable() {
        try {
            return ExternalProcess.run(Duration.ofSeconds(10), List.of("nghttp", "--version"), null).exit() == 0;
        } catch (UncheckedIOException notInstalled) {
            return false;
        }
    }

    /**
     * A loopback listener that opens a CONNECT tunnel through the proxy for each connection it accepts and relays
     * bytes both ways: the proxy hop for a client that cannot use an HTTP proxy itself.
     */
    static final class ConnectBridge implements AutoCloseable {
        private final ServerSocket server;
        private final List<Socket> open = new ArrayList<>();

        ConnectBridge(InetSocketAddress proxy, String target) throws IOException {
            server = new ServerSocket(0, 8, java.net.InetAddress.getLoopbackAddress());
            Thread.ofVirtual().start(() -> {
                while (!server.isClosed()) {
                    try {
                        Socket client = server.accept();
                        Socket tunnel = new Socket();
                        tunnel.connect(proxy, 5000);
                        synchronized (open) {
                            open.add(client);
                            open.add(tunnel);
                        }
                        tunnel.getOutputStream().write(("CONNECT " + target + " HTTP/1.1\r\nHost: " + target
                                + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                        String head = HttpReads.readHead(tunnel.getInputStream());
                        if (head == null || !head.startsWith("HTTP/1.1 200")) {
                            client.close();
                            tunnel.close();
                            continue;
                        }
                        Thread.ofVirtual().start(() -> pipe(client, tunnel));
                        Thread.ofVirtual().start(() -> pipe(tunnel, client));
                    } catch (IOException closed) {
                        return;
                    }
                }
            });
        }

        int port() {
            return server.getLocalPort();
        }

        private static void pipe(Socket from, Socket to) {
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                in.transferTo(out);
            } catch (IOException ended) {
                // one side closed: the other follows
            } finally {
                try {
                    to.close();
                } catch (IOException ignored) {
                    // closing
                }
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
            synchronized (open) {
                for (Socket s : open) {
                    s.close();
                }
            }
        }
    }
}
