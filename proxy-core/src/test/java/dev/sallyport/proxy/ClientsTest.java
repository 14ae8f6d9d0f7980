package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawClient;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.Trust;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.WebSocket;
import okhttp3.WebSocketListener;
import okio.BufferedSink;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Real clients (JDK HttpClient, OkHttp, OkHttp WebSocket) through the intercepting proxy; audit and metrics. */
class ClientsTest {

    static Path dir;
    static EchoUpstream upstream;
    static ProxyFixture proxy;
    static String base;

    @BeforeAll
    static void start() throws Exception {
        dir = ProxyFixture.tempDir();
        TestPki pki = TestPki.create();
        upstream = EchoUpstream.https(pki.issue("upstream.test"));
        MapResolver resolver = new MapResolver().map("upstream.test", "127.0.0.1");
        String rules = "  - name: upstream\n    hosts: [upstream.test]\n    ports: [" + upstream.port() + "]\n";
        proxy = ProxyFixture.start(ProxyFixture.policy(pki.rootPem(dir), "upstream.test:" + upstream.port(),
                "", rules), resolver, dir);
        base = "https://upstream.test:" + upstream.port();
    }

    @AfterAll
    static void stop() {
        proxy.close();
        upstream.close();
    }

    static OkHttpClient okhttp() throws Exception {
        Trust trust = Trust.of(proxy.caPem);
        return new OkHttpClient.Builder()
                .proxy(new java.net.Proxy(java.net.Proxy.Type.HTTP, proxy.address()))
                .sslSocketFactory(trust.context.getSocketFactory(), trust.manager)
                .readTimeout(Duration.ofSeconds(20))
                .build();
    }

    @Test
    void jdkHttpClientGetsThroughWithOurCa() throws Exception {
        HttpClient client = HttpClient.newBuilder().proxy(ProxySelector.of(proxy.address()))
                .sslContext(Trust.of(proxy.caPem).context).connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create(base + "/jdk?q=1"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.version()).isEqualTo(HttpClient.Version.HTTP_2);     // offered by default
        assertThat(response.body()).startsWith("GET /jdk?q=1 host=upstream.test:" + upstream.port());
        client.close();
    }

    @Test
    void okhttpStreamsALargeUploadAndDownload() throws Exception {
        OkHttpClient client = okhttp();
        long size = 8L * 1024 * 1024;
        RequestBody body = new RequestBody() {
            @Override
            public MediaType contentType() {
                return MediaType.get("application/octet-stream");
            }

            @Override
            public long contentLength() {
                return -1;   // chunked
            }

            @Override
            public void writeTo(BufferedSink sink) throws java.io.IOException {
                byte[] block = new byte[64 * 1024];
                for (long sent = 0; sent < size; sent += block.length) {
                    sink.write(block);
                }
            }
        };
        try (Response r = client.newCall(new Request.Builder().url(base + "/upload").post(body).build()).execute()) {
            assertThat(r.code()).isEqualTo(200);
            assertThat(r.body().source().readUtf8Line()).isEqualTo("POST /upload host=upstream.test:"
                    + upstream.port() + " len=" + size);
        }
        long download = 32L * 1024 * 1024;
        try (Response r = client.newCall(new Request.Builder().url(base + "/bytes/" + download).build()).execute()) {
            assertThat(r.code()).isEqualTo(200);
            long total = 0;
            var source = r.body().source();
            while (!source.exhausted()) {
                total += source.getBuffer().size();
                source.getBuffer().clear();
                source.request(64 * 1024);
            }
            assertThat(total).isEqualTo(download);
        }
        AuditFields up = proxy.events.await("exchange", f -> "/upload".equals(f.path()));
        assertThat(up.bytesUp()).isEqualTo(size);
        AuditFields down = proxy.events.await("exchange", f -> ("/bytes/" + download).equals(f.path()));
        assertThat(down.bytesDown()).isEqualTo(download);
    }

    @Test
    void webSocketUpgradesThroughInterceptionAndIsAuditedWhenClosed() throws Exception {
        BlockingQueue<String> messages = new ArrayBlockingQueue<>(10);
        WebSocket ws = okhttp().newWebSocket(new Request.Builder().url("wss://upstream.test:" + upstream.port() + "/ws")
                .build(), new WebSocketListener() {
                    @Override
                    public void onMessage(WebSocket webSocket, String text) {
                        messages.add(text);
                    }

                    @Override
                    public void onFailure(WebSocket webSocket, Throwable t, Response response) {
                        messages.add("failure: " + t);
                    }
                });
        ws.send("hello");
        assertThat(messages.poll(10, TimeUnit.SECONDS)).isEqualTo("echo:hello");
        ws.send("again");
        assertThat(messages.poll(10, TimeUnit.SECONDS)).isEqualTo("echo:again");
        ws.close(1000, "bye");
        AuditFields end = proxy.events.await("websocket_end", f -> true);
        assertThat(end.path()).isEqualTo("/ws");
        assertThat(end.bytesUp()).isPositive();
        assertThat(end.bytesDown()).isPositive();
        proxy.events.await("exchange", f -> Integer.valueOf(101).equals(f.status()));
    }

    @Test
    void auditFileHasOneRecordPerExchangeWithoutQueryOrHeaderValues() throws Exception {
        try (Response r = okhttp().newCall(new Request.Builder().url(base + "/audited?apikey=s3cr3t")
                .header("Authorization", "Bearer tok-123").build()).execute()) {
            assertThat(r.code()).isEqualTo(200);
        }
        proxy.events.await("exchange", f -> "/audited".equals(f.path()));
        proxy.proxy.flushAudit();
        String audit = Files.readString(proxy.auditFile);
        assertThat(audit.lines().filter(l -> l.contains("\"/audited\"") && l.contains("\"bytes_down\""))).hasSize(1);
        assertThat(audit).doesNotContain("s3cr3t").doesNotContain("tok-123");
        assertThat(audit.lines().filter(l -> l.contains("\"/audited\"") && l.contains("\"bytes_down\""))
                .findFirst().orElseThrow())
                .contains("\"ip\":\"127.0.0.1\"").contains("\"status\":200").contains("\"tls\":\"intercepted\"");
    }

    @Test
    void metricsCountRequestsAfterTraffic() throws Exception {
        try (Response r = okhttp().newCall(new Request.Builder().url(base + "/metered").build()).execute()) {
            assertThat(r.code()).isEqualTo(200);
        }
        InetSocketAddress admin = proxy.proxy.adminAddress();
        String scrape = RawClient.exchange(admin, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assertThat(scrape).contains("sallyport_requests_total").contains("decision=\"allow\"");
    }

    @Test
    void theAdminListenerIsNotReachableThroughTheProxy() throws Exception {
        int adminPort = proxy.proxy.adminAddress().getPort();
        String response = RawClient.exchange(proxy.address(), "GET http://127.0.0.1:" + adminPort
                + "/metrics HTTP/1.1\r\nHost: 127.0.0.1:" + adminPort + "\r\n\r\n");
        assertThat(response).startsWith("HTTP/1.1 403 ");
        assertThat(response).doesNotContain("sallyport_requests_total");
    }
}
