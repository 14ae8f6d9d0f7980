package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawH2;
import dev.sallyport.proxy.testing.Upstreams;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Trust;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
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
 * HTTP/2 on the client leg ({@code proxy.http2: true}) with real clients (curl, the JDK client) against an HTTP/1.1
 * upstream on loopback: each stream is one exchange with the policy, secrets and audit of HTTP/1.1, and a refusal
 * stays on its stream.
 */
class Http2Test {

    static final String VALUE = "real-h2-token-value-7f3a";
    static final String PH = "sallyport-ph-httptwoplaceholdervalue";
    static final String OTHER_PH = "sallyport-ph-otherhostplaceholdervalue";

    static Upstreams up;
    static ProxyFixture proxy;
    static ProxyFixture h1Only;
    static Trust trust;
    static String authority;

    @BeforeAll
    static void start() throws Exception {
        up = Upstreams.start("api.test");
        Path value = Files.writeString(up.dir.resolve("token"), VALUE + "\n");
        String rules = "  - name: api\n    hosts: [api.test]\n    ports: [" + up.tls.port() + "]\n";
        String secrets = "secrets:\n"
                + "  - name: TOKEN\n    from: file:" + value + "\n    hosts: [api.test]\n"
                + "    headers: [Authorization]\n    placeholder: " + PH + "\n"
                + "  - name: OTHER\n    from: file:" + value + "\n    hosts: [elsewhere.test]\n"
                + "    headers: [Authorization]\n    placeholder: " + OTHER_PH + "\n";
        MapResolver resolver = new MapResolver().map("api.test", "127.0.0.1");
        String allowPrivate = "api.test:" + up.tls.port();
        proxy = ProxyFixture.start(ProxyFixture.policy(up.root, allowPrivate, "  http2: true\n", rules) + secrets,
                resolver, up.dir);
        h1Only = ProxyFixture.start(ProxyFixture.policy(up.root, allowPrivate, "  http2: false\n", rules),
                new MapResolver().map("api.test", "127.0.0.1"), ProxyFixture.tempDir());
        trust = Trust.of(proxy.caPem);
        authority = "api.test:" + up.tls.port();
    }

    @AfterAll
    static void stop() throws Exception {
        proxy.proxy.flushAudit();
        String audit = Files.readString(proxy.auditFile);
        proxy.close();
        h1Only.close();
        up.close();
        assertThat(audit).doesNotContain(VALUE);
    }

    ExternalProcess.Result curl(ProxyFixture p, String... args) {
        List<String> cmd = new ArrayList<>(List.of("curl", "-sS", "--max-time", "10", "-x", p.proxyUrl(),
                "--cacert", p.caPem.toString(), "-D", "-", "--noproxy", "", "--http2"));
        cmd.addAll(List.of(args));
        return ExternalProcess.run(Duration.ofSeconds(20), cmd, null);
    }

    @Test
    void curlSpeaksHttp2ToTheProxyAndTheExchangeIsAuditedAsH2() {
        ExternalProcess.Result r = curl(proxy, "https://" + authority + "/h2/get?x=1");
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("\nHTTP/2 200").contains("x-upstream: echo")
                .contains("GET /h2/get?x=1 host=" + authority);
        AuditFields f = proxy.events.await("exchange", e -> "/h2/get".equals(e.path()));
        assertThat(f.protocol()).isEqualTo("h2");
        assertThat(f.status()).isEqualTo(200);
        assertThat(f.tls()).isEqualTo("intercepted");
    }

    @Test
    void aRequestBodyGoesUpstreamWhole() throws Exception {
        Path body = Files.writeString(up.dir.resolve("body"), "x".repeat(300_000));
        ExternalProcess.Result r = curl(proxy, "--data-binary", "@" + body, "https://" + authority + "/h2/post");
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("\nHTTP/2 200").contains("POST /h2/post host=" + authority
                + " len=300000");
    }

    @Test
    void withoutTheSwitchAlpnOffersOnlyHttp11() {
        ExternalProcess.Result r = curl(h1Only, "https://" + authority + "/h1/only");
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("\nHTTP/1.1 200").doesNotContain("HTTP/2");
        assertThat(h1Only.events.await("exchange", e -> "/h1/only".equals(e.path())).protocol())
                .isEqualTo("http/1.1");
    }

    @Test
    void theJdkClientMultiplexesConcurrentRequestsAndASecretIsInjectedPerStream() throws Exception {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2)
                .proxy(ProxySelector.of(proxy.address())).sslContext(trust.context)
                .connectTimeout(Duration.ofSeconds(5)).build();
        try (client) {
            // one request first, so that the others find the HTTP/2 connection and share it
            HttpResponse<String> first = client.send(HttpRequest.newBuilder(URI.create("https://" + authority
                    + "/h2/jdk/first")).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(first.version()).isEqualTo(HttpClient.Version.HTTP_2);
            List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("https://" + authority + "/h2/jdk/" + i))
                        .timeout(Duration.ofSeconds(10));
                if (i % 5 == 0) {
                    b.header("Authorization", "Bearer " + PH);          // swapped on this stream
                }
                if (i == 7) {
                    b.header("Authorization", "Bearer " + OTHER_PH);    // another host's: refused on this stream
                }
                all.add(client.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString()));
            }
            for (int i = 0; i < all.size(); i++) {
                HttpResponse<String> r = all.get(i).get();
                assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_2);
                if (i == 7) {
                    assertThat(r.statusCode()).isEqualTo(403);
                    assertThat(r.headers().firstValue("x-sallyport-reason")).hasValue("secret_wrong_host");
                } else {
                    assertThat(r.statusCode()).as("stream %d", i).isEqualTo(200);
                    assertThat(r.body()).startsWith("GET /h2/jdk/" + i + " ");
                }
            }
        }
        String seen = String.join("\n", up.tls.requests);
        assertThat(seen).contains("Bearer " + VALUE).doesNotContain(PH).doesNotContain("/h2/jdk/7 ");
        assertThat(proxy.events.await("exchange", e -> "/h2/jdk/5".equals(e.path())).secrets())
                .containsExactly("TOKEN");
        assertThat(proxy.events.await("request", e -> "/h2/jdk/7".equals(e.path())).reason())
                .isEqualTo("secret_wrong_host");
    }

    // ---- attacks, with raw frames ----

    RawH2 raw() {
        return RawH2.open(proxy.address(), "api.test", up.tls.port(), trust.context);
    }

    @Test
    void aBodyLongerThanItsContentLengthNeverBecomesASecondUpstreamRequest() {
        String smuggled = "GET /h2/smuggled HTTP/1.1\r\nHost: " + authority + "\r\n\r\n";
        try (RawH2 c = raw()) {
            c.headers(1, false, RawH2.request("POST", authority, "/h2/cl", "content-length", "4"));
            c.data(1, true, ("abcd" + smuggled).getBytes(StandardCharsets.US_ASCII));
            RawH2.StreamResult r = c.await(1);
            assertThat(r.status()).isNotEqualTo("200");
            // and the connection still serves a well-formed stream
            c.headers(3, true, RawH2.request("GET", authority, "/h2/after-cl"));
            assertThat(c.await(3).status()).isEqualTo("200");
        }
        assertThat(String.join("\n", up.tls.requests)).doesNotContain("/h2/smuggled");
        assertThat(proxy.events.await("exchange", e -> "/h2/cl".equals(e.path())).reason())
                .isEqualTo("content_length_mismatch");
    }

    @Test
    void headerFieldsThatWouldSplitAnHttp11RequestAreRefused() {
        String[][] cases = {
            {"/h2/crlf", "x-test", "a\r\nX-Injected: 1"},
            {"/h2/te", "transfer-encoding", "chunked"},
            {"/h2/conn", "connection", "close"},
            {"/h2/upgrade", "upgrade", "websocket"},
        };
        String client;
        try (RawH2 c = raw()) {
            client = c.client();
            int stream = 1;
            for (String[] k : cases) {
                c.headers(stream, true, RawH2.request("GET", authority, k[0], k[1], k[2]));
                RawH2.StreamResult r = c.await(stream);
                assertThat(r.status()).as(k[0]).isNotEqualTo("200");
                stream += 2;
            }
            c.headers(stream, true, RawH2.request("GET", authority, "/h2/path HTTP/1.1\r\nX-Injected: 1\r\nx: y"));
            assertThat(c.await(stream).status()).isNotEqualTo("200");
        }
        assertThat(String.join("\n", up.tls.requests)).doesNotContain("X-Injected").doesNotContain("/h2/crlf")
                .doesNotContain("/h2/te").doesNotContain("/h2/conn").doesNotContain("/h2/upgrade");
        assertThat(refusals(client, 5)).allSatisfy(f -> assertThat(f.decision()).isEqualTo("deny"));
    }

    @Test
    void theAuthorityMustNameTheTunnelsTargetAndAgreeWithHost() {
        try (RawH2 c = raw()) {
            c.headers(1, true, RawH2.request("GET", "other.test:" + up.tls.port(), "/h2/other"));
            RawH2.StreamResult other = c.await(1);
            assertThat(other.status()).isEqualTo("403");
            assertThat(other.headers().get("x-sallyport-reason").toString()).isEqualTo("host_mismatch");
            c.headers(3, true, RawH2.request("GET", authority, "/h2/host", "host", "other.test"));
            RawH2.StreamResult host = c.await(3);
            assertThat(host.status()).isIn("400", "403");
        }
        assertThat(String.join("\n", up.tls.requests)).doesNotContain("/h2/other").doesNotContain("/h2/host");
        assertThat(proxy.events.await("request", e -> "/h2/other".equals(e.path())).reason())
                .isEqualTo("host_mismatch");
    }

    /** Waits for {@code count} refused request records of {@code client}'s connection (every refusal is recorded). */
    static List<AuditFields> refusals(String client, int count) {
        dev.sallyport.testing.Await.until(count + " refusals recorded for " + client, Duration.ofSeconds(10),
                () -> requestRecords(client).size() >= count);
        return requestRecords(client);
    }

    static List<AuditFields> requestRecords(String client) {
        return proxy.events.events.stream().filter(e -> e instanceof dev.sallyport.proxy.events.ProxyEvent.Decided d
                        && "request".equals(d.event()) && client.equals(d.fields().client()))
                .map(e -> ((dev.sallyport.proxy.events.ProxyEvent.Decided) e).fields())
                .filter(f -> !"allow".equals(f.decision())).toList();
    }

    @Test
    void missingAndMisplacedPseudoHeadersAreRefused() {
        String client;
        try (RawH2 c = raw()) {
            client = c.client();
            c.headers(1, true, ":method", "GET", ":scheme", "https", ":authority", authority);    // no :path
            assertThat(c.await(1).status()).isNotEqualTo("200");
            c.headers(3, true, ":method", "GET", ":scheme", "https", "x-a", "b", ":authority", authority, ":path",
                    "/h2/late-pseudo");
            assertThat(c.await(3).status()).isNotEqualTo("200");
            c.headers(5, true, ":method", "GET", ":method", "POST", ":scheme", "https", ":authority", authority,
                    ":path", "/h2/dup-pseudo");
            assertThat(c.await(5).status()).isNotEqualTo("200");
            c.headers(7, true, ":method", "CONNECT", ":authority", "elsewhere.test:443");
            assertThat(c.await(7).status()).isNotEqualTo("200");
        }
        assertThat(String.join("\n", up.tls.requests)).doesNotContain("/h2/late-pseudo")
                .doesNotContain("/h2/dup-pseudo");
        assertThat(refusals(client, 4)).allSatisfy(f -> assertThat(f.reason()).isNotNull());
    }

    @Test
    void rapidResetClosesTheConnectionBeforeTheUpstreamSeesAFlood() {
        int before = up.tls.requests.size();
        try (RawH2 c = raw()) {
            for (int i = 0, stream = 1; i < 1_000; i++, stream += 2) {
                c.headers(stream, false, RawH2.request("POST", authority, "/h2/reset/" + i));
                c.rst(stream, 0x8);
            }
            RawH2.Frame goaway = c.awaitGoaway();
            assertThat(goaway).as("GOAWAY after the flood").isNotNull();
            assertThat(goaway.errorCode()).isEqualTo(0xb);    // ENHANCE_YOUR_CALM
            String client = c.client();
            assertThat(proxy.events.await("tunnel_end", f -> client.equals(f.client())).reason())
                    .isEqualTo("h2_enhance_your_calm");
        }
        assertThat(up.tls.requests.size() - before).isLessThan(400);
    }

    @Test
    void aContinuationFloodEndsTheConnection() {
        try (RawH2 c = raw()) {
            byte[] block = RawH2.block(RawH2.request("GET", authority, "/h2/continuation"));
            c.frame(RawH2.HEADERS, RawH2.END_STREAM, 1, block);   // no END_HEADERS
            for (int i = 0; i < 10_000 && c.seen().stream().noneMatch(f -> f.type() == RawH2.GOAWAY); i++) {
                try {
                    c.frame(RawH2.CONTINUATION, 0, 1, new byte[0]);
                } catch (java.io.UncheckedIOException closed) {
                    break;
                }
            }
            RawH2.Frame goaway = c.awaitGoaway();
            assertThat(goaway != null || c.closed()).as("the connection ended").isTrue();
            String client = c.client();
            assertThat(proxy.events.await("tunnel_end", f -> client.equals(f.client())).reason()).startsWith("h2_");
        }
        assertThat(String.join("\n", up.tls.requests)).doesNotContain("/h2/continuation");
    }

    @Test
    void anOversizedHeaderListIsRefused() {
        try (RawH2 c = raw()) {
            List<String> fields = new ArrayList<>(List.of(RawH2.request("GET", authority, "/h2/big-headers")));
            for (int i = 0; i < 64; i++) {
                fields.add("x-big-" + i);
                fields.add("v".repeat(4_000));
            }
            byte[] block = RawH2.block(fields.toArray(String[]::new));
            int max = 16_384;
            boolean cut = false;
            try {
                c.frame(RawH2.HEADERS, RawH2.END_STREAM, 1, java.util.Arrays.copyOfRange(block, 0, max));
                for (int at = max; at < block.length; at += max) {
                    int end = Math.min(block.length, at + max);
                    c.frame(RawH2.CONTINUATION, end == block.length ? RawH2.END_HEADERS : 0, 1,
                            java.util.Arrays.copyOfRange(block, at, end));
                }
            } catch (java.io.UncheckedIOException closed) {
                cut = true;                 // the proxy may end the connection while the block is still arriving
            }
            if (!cut) {
                RawH2.StreamResult r = c.await(1);
                assertThat(r.status()).isNotEqualTo("200");
            }
        }
        assertThat(String.join("\n", up.tls.requests)).doesNotContain("/h2/big-headers");
    }

    @Test
    void aPingFloodFromAClientThatNeverReadsEndsItsConnectionAlone() {
        String client;
        boolean cut = false;
        try (RawH2 c = RawH2.open(proxy.address(), "api.test", up.tls.port(), trust.context, 4096)) {
            client = c.client();
            byte[] ping = new byte[8];
            for (int i = 0; i < 500_000; i++) {      // 8.5 MB of PINGs; the acknowledgements are never read
                try {
                    c.frame(RawH2.PING, 0, 0, ping);
                } catch (java.io.UncheckedIOException closed) {
                    cut = true;
                    break;
                }
            }
        }
        assertThat(cut).as("the proxy ended the flooding connection").isTrue();
        assertThat(proxy.events.await("tunnel_end", f -> client.equals(f.client())).reason()).startsWith("h2_");
        try (RawH2 other = raw()) {
            other.headers(1, true, RawH2.request("GET", authority, "/h2/after-ping-flood"));
            assertThat(other.await(1).status()).isEqualTo("200");
        }
    }

    @Test
    void streamsBeyondTheConcurrencyLimitAreRefused() {
        try (RawH2 c = raw()) {
            int stream = 1;
            for (int i = 0; i <= 100; i++, stream += 2) {     // 101 open streams, each waiting for its body
                c.headers(stream, false, RawH2.request("POST", authority, "/h2/open/" + i));
            }
            RawH2.StreamResult last = c.await(stream - 2);
            assertThat(last.resetCode()).as("the 101st stream").isEqualTo(0x7);   // REFUSED_STREAM
            assertThat(refusals(c.client(), 1)).extracting(AuditFields::reason).containsExactly("h2_refused_stream");
        }
    }
}
