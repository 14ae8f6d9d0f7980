package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.H2EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.Trust;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * HTTP/2 on both legs: an HTTP/2 client through the proxy to an upstream that chooses {@code h2} in ALPN gets its
 * streams carried as streams of one pooled upstream connection, with the policy, secrets and audit of any other
 * exchange; the audit record names both legs' protocols.
 */
class Http2UpstreamTest {

    static final String VALUE = "real-h2-upstream-token-9c1d";
    static final String PH = "sallyport-ph-httptwoupstreamplaceholder";
    static final String OTHER_PH = "sallyport-ph-httptwootherhostplaceholder";

    static H2EchoUpstream up;
    static H2EchoUpstream only;
    static ProxyFixture proxy;
    static Trust trust;
    static String authority;
    static Path dir;

    @BeforeAll
    static void start() throws Exception {
        dir = ProxyFixture.tempDir();
        TestPki pki = TestPki.create();
        Path root = pki.rootPem(dir);
        up = H2EchoUpstream.start(pki.issue("h2.test"));
        only = H2EchoUpstream.refusingHttp11(pki.issue("only.test"));
        Path value = Files.writeString(dir.resolve("token"), VALUE + "\n");
        String rules = "  - name: h2\n    hosts: [h2.test]\n    ports: [" + up.port() + "]\n"
                + "  - name: only\n    hosts: [only.test]\n    ports: [" + only.port() + "]\n";
        String secrets = "secrets:\n"
                + "  - name: TOKEN\n    from: file:" + value + "\n    hosts: [h2.test]\n"
                + "    headers: [Authorization]\n    placeholder: " + PH + "\n"
                + "  - name: OTHER\n    from: file:" + value + "\n    hosts: [elsewhere.test]\n"
                + "    headers: [Authorization]\n    placeholder: " + OTHER_PH + "\n";
        proxy = ProxyFixture.start(ProxyFixture.policy(root, "h2.test:" + up.port() + ", only.test:" + only.port(),
                "  http2: true\n", rules) + secrets,
                new MapResolver().map("h2.test", "127.0.0.1").map("only.test", "127.0.0.1"), dir);
        trust = Trust.of(proxy.caPem);
        authority = "h2.test:" + up.port();
    }

    @AfterAll
    static void stop() throws Exception {
        proxy.proxy.flushAudit();
        String audit = Files.readString(proxy.auditFile);
        proxy.close();
        up.close();
        only.close();
        assertThat(audit).doesNotContain(VALUE);
    }

    ExternalProcess.Result curl(String... args) {
        List<String> cmd = new ArrayList<>(List.of("curl", "-sS", "--max-time", "10", "-x", proxy.proxyUrl(),
                "--cacert", proxy.caPem.toString(), "-D", "-", "--noproxy", "", "--http2"));
        cmd.addAll(List.of(args));
        return ExternalProcess.run(Duration.ofSeconds(20), cmd, null);
    }

    HttpClient jdkClient() {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).proxy(ProxySelector.of(proxy.address()))
                .sslContext(trust.context).connectTimeout(Duration.ofSeconds(5)).build();
    }

    static HttpRequest.Builder get(String path) {
        return HttpRequest.newBuilder(URI.create("https://" + authority + path)).timeout(Duration.ofSeconds(10));
    }

    @Test
    void curlGetsHttp2OnBothLegsAndTheAuditRecordSaysSo() {
        ExternalProcess.Result r = curl("https://" + authority + "/both?x=1");
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("\nHTTP/2 200").contains("x-upstream: h2echo")
                .contains("GET /both?x=1 authority=" + authority);
        AuditFields f = proxy.events.await("exchange", e -> "/both".equals(e.path()));
        assertThat(f.protocol()).isEqualTo("h2");
        assertThat(f.upstreamProtocol()).isEqualTo("h2");
        assertThat(f.status()).isEqualTo(200);
        assertThat(up.seen("/both").fields()).containsEntry(":scheme", "https").containsEntry(":authority", authority)
                .doesNotContainKeys("host", "connection", "transfer-encoding");
    }

    @Test
    void aRequestBodyStreamsWholeToTheUpstream() throws Exception {
        Path body = Files.writeString(dir.resolve("body"), "y".repeat(700_000));
        ExternalProcess.Result r = curl("--data-binary", "@" + body, "https://" + authority + "/post");
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("\nHTTP/2 200").contains("POST /post authority=" + authority + " te=null"
                + " len=700000");
    }

    @Test
    void aLargeResponseComesWholeThroughTheStreamsFlowControl() throws Exception {
        try (HttpClient client = jdkClient()) {
            HttpResponse<byte[]> r = client.send(get("/bytes/5000000").build(), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_2);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).hasSize(5_000_000);
        }
        assertThat(proxy.events.await("exchange", e -> "/bytes/5000000".equals(e.path())).bytesDown())
                .isEqualTo(5_000_000L);
    }

    @Test
    void concurrentStreamsShareOneUpstreamConnectionAndSecretsAreSwappedPerStream() throws Exception {
        int connectionsBefore = up.connections.get();
        try (HttpClient client = jdkClient()) {
            HttpResponse<String> first = client.send(get("/mux/first").build(), HttpResponse.BodyHandlers.ofString());
            assertThat(first.statusCode()).isEqualTo(200);
            int connection = up.seen("/mux/first").connection();
            List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                HttpRequest.Builder b = get("/mux/" + i);
                if (i % 4 == 0) {
                    b.header("Authorization", "Bearer " + PH);
                }
                if (i == 7) {
                    b.header("Authorization", "Bearer " + OTHER_PH);
                }
                all.add(client.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString()));
            }
            for (int i = 0; i < all.size(); i++) {
                HttpResponse<String> r = all.get(i).get();
                if (i == 7) {
                    assertThat(r.statusCode()).isEqualTo(403);
                    assertThat(r.headers().firstValue("x-sallyport-reason")).hasValue("secret_wrong_host");
                    continue;
                }
                assertThat(r.statusCode()).as("stream %d", i).isEqualTo(200);
                assertThat(r.body()).startsWith("GET /mux/" + i + " ");
                H2EchoUpstream.Seen seen = up.seen("/mux/" + i);
                assertThat(seen.connection()).as("stream %d", i).isEqualTo(connection);
                if (i % 4 == 0) {
                    assertThat(seen.fields()).containsEntry("authorization", "Bearer " + VALUE);
                }
            }
        }
        // one client connection on one event loop: one upstream connection carried every stream
        assertThat(up.connections.get() - connectionsBefore).isLessThanOrEqualTo(1);
        assertThat(up.seen("/mux/7")).isNull();
        assertThat(proxy.events.await("exchange", e -> "/mux/8".equals(e.path())).secrets()).containsExactly("TOKEN");
    }

    @Test
    void aRealValueTheUpstreamSendsBackIsScrubbedFromHeadersBodyAndTrailers() {
        ExternalProcess.Result r = curl("-H", "Authorization: Bearer " + PH, "https://" + authority + "/reflect");
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(up.seen("/reflect").fields()).containsEntry("authorization", "Bearer " + VALUE);
        assertThat(r.stdout()).contains("\nHTTP/2 200").contains("x-echo-auth:").contains("body has Bearer ")
                .contains("x-trailer-auth:")
                .doesNotContain(VALUE);
        assertThat(proxy.events.await("exchange", e -> "/reflect".equals(e.path())).upstreamProtocol())
                .isEqualTo("h2");
    }

    @Test
    void anHttp11ClientReachesAnUpstreamThatSpeaksOnlyHttp2() {
        for (int i = 0; i < 2; i++) {   // the second finds the destination remembered as HTTP/2 alone
            ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(20), List.of("curl", "-sS", "--max-time",
                    "10", "-x", proxy.proxyUrl(), "--cacert", proxy.caPem.toString(), "-D", "-", "--noproxy", "",
                    "--http1.1", "https://only.test:" + only.port() + "/h1-client/" + i), null);
            assertThat(r.exit()).as(r.stderr()).isZero();
            assertThat(r.stdout()).contains("HTTP/1.1 200").contains("GET /h1-client/" + i + " authority=only.test:");
            String path = "/h1-client/" + i;
            AuditFields f = proxy.events.await("exchange", e -> path.equals(e.path()));
            assertThat(f.protocol()).isEqualTo("http/1.1");
            assertThat(f.upstreamProtocol()).isEqualTo("h2");
        }
    }

    @Test
    void anUpstreamResetIsA502WithItsReasonOnThatStreamAlone() throws Exception {
        try (HttpClient client = jdkClient()) {
            HttpResponse<String> reset = client.send(get("/reset").build(), HttpResponse.BodyHandlers.ofString());
            assertThat(reset.statusCode()).isEqualTo(502);
            assertThat(reset.headers().firstValue("x-sallyport-reason")).hasValue("upstream_reset");
            HttpResponse<String> after = client.send(get("/after-reset").build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(after.statusCode()).isEqualTo(200);
        }
        assertThat(proxy.events.await("exchange", e -> "/reset".equals(e.path())).reason())
                .isEqualTo("upstream_reset");
    }
}
