package dev.sallyport.proxy.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.metrics.ProxyMetrics;
import dev.sallyport.proxy.reload.ReloadResult;
import dev.sallyport.testing.Prerequisites;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class AdminServerTest {

    private static final String TOKEN = "s3cr3t-admin-token";

    private static EventLoopGroup group;

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final ProxyMetrics metrics = new ProxyMetrics();
    private final AtomicBoolean ready = new AtomicBoolean(true);
    private final AtomicInteger reloads = new AtomicInteger();
    private volatile ReloadResult nextReload = new ReloadResult(true, List.of());
    private AdminServer server;

    @BeforeAll
    static void startGroup() {
        group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    }

    @AfterAll
    static void stopGroup() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
        client.close();
        metrics.close();
    }

    private void start(String token) throws Exception {
        AdminEndpoints endpoints = new AdminEndpoints(metrics::scrape, () -> {
            reloads.incrementAndGet();
            return nextReload;
        }, () -> ready.get() ? Optional.empty() : Optional.of("starting"), token == null ? null : new AdminToken(token));
        server = AdminServer.start(new InetSocketAddress("127.0.0.1", 0), group, endpoints);
    }

    @Test
    void healthzAndReadyz() throws Exception {
        start(null);
        assertThat(get("/healthz")).extracting(HttpResponse::statusCode, HttpResponse::body).containsExactly(200, "ok\n");
        assertThat(get("/readyz")).extracting(HttpResponse::statusCode, HttpResponse::body)
                .containsExactly(200, "ready\n");

        ready.set(false);
        assertThat(get("/readyz")).extracting(HttpResponse::statusCode, HttpResponse::body)
                .containsExactly(503, "not ready: starting\n");
        assertThat(get("/healthz").statusCode()).isEqualTo(200);
    }

    @Test
    void metricsServesPrometheusTextAfterEvents() throws Exception {
        start(null);
        Instant ts = Instant.now();
        metrics.on(new ProxyEvent.Decided(ts, "connect", new AuditFields("1", null, null, "a.example", 443, null,
                "CONNECT", null, 403, "deny", null, "no_matching_rule", null, null, null, null, null, null)));
        metrics.on(new ProxyEvent.ConnectionOpened(ts));

        HttpResponse<String> r = get("/metrics");

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type")).contains("text/plain; version=0.0.4; charset=utf-8");
        assertThat(r.body()).contains("sallyport_requests_total{decision=\"deny\",rule=\"none\"} 1.0\n",
                "sallyport_connections_active 1.0\n", "sallyport_audit_dropped_total 0.0\n", "jvm_memory_used_bytes");
    }

    @Test
    void unknownPathIs404AndWrongMethodIs405() throws Exception {
        start(TOKEN);
        assertThat(get("/admin").statusCode()).isEqualTo(404);
        assertThat(get("/").statusCode()).isEqualTo(404);
        HttpResponse<String> post = post("/metrics", null);
        assertThat(post.statusCode()).isEqualTo(405);
        assertThat(post.headers().firstValue("allow")).contains("GET");
        HttpResponse<String> getReload = get("/reload");
        assertThat(getReload.statusCode()).isEqualTo(405);
        assertThat(getReload.headers().firstValue("allow")).contains("POST");
        assertThat(reloads).hasValue(0);
    }

    @Test
    void reloadWithoutConfiguredTokenIsRefusedWithHowToConfigure() throws Exception {
        start(null);

        HttpResponse<String> r = post("/reload", "Bearer anything");

        assertThat(r.statusCode()).isEqualTo(403);
        assertThat(r.body()).contains("admin_token: {env: NAME}", "admin_token: {file: PATH}");
        assertThat(reloads).hasValue(0);
    }

    @Test
    void reloadRequiresTheRightBearerToken() throws Exception {
        start(TOKEN);

        HttpResponse<String> missing = post("/reload", null);
        HttpResponse<String> wrong = post("/reload", "Bearer " + TOKEN + "x");
        HttpResponse<String> wrongScheme = post("/reload", "Basic " + TOKEN);
        HttpResponse<String> prefix = post("/reload", "Bearer " + TOKEN.substring(0, 5));

        for (HttpResponse<String> r : List.of(missing, wrong, wrongScheme, prefix)) {
            assertThat(r.statusCode()).isEqualTo(401);
            assertThat(r.headers().firstValue("www-authenticate")).contains("Bearer");
            assertThat(r.body()).doesNotContain(TOKEN);
        }
        assertThat(reloads).hasValue(0);

        HttpResponse<String> right = post("/reload", "Bearer " + TOKEN);
        assertThat(right.statusCode()).isEqualTo(200);
        assertThat(right.body()).isEqualTo("reloaded\n");
        assertThat(post("/reload", "bearer " + TOKEN).statusCode()).isEqualTo(200);
        assertThat(reloads).hasValue(2);
    }

    @Test
    void failedReloadIs422WithTheErrors() throws Exception {
        start(TOKEN);
        nextReload = new ReloadResult(false, List.of("p.yaml:4:9: rules[0].hosts[0]: '*' is not a valid pattern"
                + " (expected: a host name or *.domain)"));

        HttpResponse<String> r = post("/reload", "Bearer " + TOKEN);

        assertThat(r.statusCode()).isEqualTo(422);
        assertThat(r.body()).isEqualTo("reload failed; old policy kept\np.yaml:4:9: rules[0].hosts[0]: '*' is not a"
                + " valid pattern (expected: a host name or *.domain)\n");
    }

    @Test
    void oversizedBodyIsRefusedWithoutReloading() throws Exception {
        start(TOKEN);
        HttpRequest big = HttpRequest.newBuilder(uri("/reload")).header("Authorization", "Bearer " + TOKEN)
                .POST(HttpRequest.BodyPublishers.ofString("x".repeat(AdminInitializer.MAX_CONTENT + 1))).build();

        assertThat(client.send(big, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(413);
        assertThat(reloads).hasValue(0);
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() throws Exception {
        start(null);
        try (Socket s = new Socket()) {
            s.connect(server.address(), 5000);
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n"
                    + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            String all = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            int metricsAt = all.indexOf("sallyport_audit_dropped_total");
            int okAt = all.lastIndexOf("\r\n\r\nok\n");
            assertThat(metricsAt).isPositive();
            assertThat(okAt).isGreaterThan(metricsAt);
        }
    }

    @Test
    void malformedAndOversizedHeadersAreRefused() throws Exception {
        start(TOKEN);
        assertThat(raw("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(9000) + "\r\n\r\n"))
                .matches("HTTP/1.1 (400|413|431) .*");
        assertThat(raw("GARBAGE\r\n\r\n")).startsWith("HTTP/1.1 400 ");
        assertThat(reloads).hasValue(0);
    }

    private String raw(String request) throws Exception {
        try (Socket s = new Socket()) {
            s.connect(server.address(), 5000);
            s.setSoTimeout(10_000);
            s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            String all = new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            return all.lines().findFirst().orElse("");
        }
    }

    @Test
    void runsOnANativeEpollGroupToo() throws Exception {
        Prerequisites.require("epoll", io.netty.channel.epoll.Epoll.isAvailable(), "Netty's native epoll transport");
        EventLoopGroup epoll = new MultiThreadIoEventLoopGroup(1, io.netty.channel.epoll.EpollIoHandler.newFactory());
        try (AdminServer s = AdminServer.start(new InetSocketAddress("127.0.0.1", 0), epoll, new AdminEndpoints(
                metrics::scrape, () -> nextReload, Optional::empty, null))) {
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + s.address().getPort() + "/healthz")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.body()).isEqualTo("ok\n");
        } finally {
            epoll.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @Test
    void bindsOnlyWhereTold() throws Exception {
        start(null);
        assertThat(server.address().getAddress().getHostAddress()).isEqualTo("127.0.0.1");
        assertThat(server.address().getPort()).isPositive();
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.address().getPort() + path);
    }

    private HttpResponse<String> get(String path) throws Exception {
        return client.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(10)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> post(String path, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.noBody());
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
