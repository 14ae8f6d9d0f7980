package dev.sallyport.proxy;

import static dev.sallyport.proxy.testing.WebSocketRig.next;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.H2EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.SquidParent;
import dev.sallyport.proxy.testing.WebSocketRig;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.Trust;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.WebSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code upstream.proxy} through a real Squid on loopback: every kind of upstream connection (intercepted
 * HTTP/1.1, HTTP/2, a WebSocket, a passthrough tunnel) goes out as a {@code CONNECT} to the parent, which resolves
 * the names (Sallyport's resolver is never asked); the policy is decided first, interception and secret injection
 * stay here, {@code no_proxy} destinations are dialed directly, and the parent's address is exempt from
 * {@code network.deny} only as the parent.
 */
class ParentProxyTest {

    static final String VALUE = "real-parent-chain-token-5e1f";
    static final String PH = "sallyport-ph-parentchainplaceholder01";

    static Path dir;
    static Path root;
    static SquidParent squid;
    static EchoUpstream upstream;
    static EchoUpstream pinned;
    static EchoUpstream direct;
    static H2EchoUpstream h2;
    static ProxyFixture proxy;
    static MapResolver resolver;

    @BeforeAll
    static void start() throws Exception {
        dir = ProxyFixture.tempDir();
        TestPki pki = TestPki.create();
        root = pki.rootPem(dir);
        squid = SquidParent.open("upstream.test", "pinned.test", "h2.test");
        upstream = EchoUpstream.https(pki.issue("upstream.test", SquidParent.REFUSED));
        pinned = EchoUpstream.https(pki.issue("pinned.test"));
        direct = EchoUpstream.https(pki.issue("direct.test"));
        h2 = H2EchoUpstream.start(pki.issue("h2.test"));
        Path value = Files.writeString(dir.resolve("token"), VALUE + "\n");
        // only direct.test is in the resolver: a name that goes through the parent must never be looked up here
        resolver = new MapResolver().map("direct.test", "127.0.0.1");
        proxy = ProxyFixture.start(policy(squid.address(), "", value), resolver, dir);
    }

    static String policy(String parent, String credentials, Path value) {
        return "proxy:\n  listen: 127.0.0.1:3128\n  admin: 127.0.0.1:9901\n"
                + "audit:\n  path: AUDIT_PATH\n"
                + "upstream:\n  trust: [" + root + "]\n"
                + "  proxy:\n    address: " + parent + "\n" + credentials
                + "    no_proxy: [direct.test, '*.internal.test', 10.0.0.0/8]\n"
                + "network:\n  deny: default\n  allow_private: [direct.test:" + direct.port() + "]\n"
                + "rules:\n"
                + "  - name: upstream\n    hosts: [upstream.test, " + SquidParent.REFUSED + "]\n    ports: ["
                + upstream.port() + "]\n"
                + "  - name: pinned\n    hosts: [pinned.test]\n    ports: [" + pinned.port() + "]\n"
                + "    tls: passthrough\n"
                + "  - name: direct\n    hosts: [direct.test]\n    ports: [" + direct.port() + "]\n"
                + "  - name: h2\n    hosts: [h2.test]\n    ports: [" + h2.port() + "]\n"
                + "  - name: the-parent-as-a-destination\n    hosts: ['127.0.0.1']\n    ports: [" + squid.port + "]\n"
                + "secrets:\n  - name: TOKEN\n    from: file:" + value + "\n    hosts: [upstream.test, h2.test]\n"
                + "    headers: [Authorization]\n    placeholder: " + PH + "\n";
    }

    @AfterAll
    static void stop() throws Exception {
        proxy.close();
        squid.close();
        upstream.close();
        pinned.close();
        direct.close();
        h2.close();
    }

    static ExternalProcess.Result curl(ProxyFixture through, String... args) {
        List<String> cmd = new ArrayList<>(List.of("curl", "-sS", "--max-time", "10", "-x", through.proxyUrl(),
                "--cacert", through.caPem.toString(), "-D", "-", "--noproxy", ""));
        cmd.addAll(List.of(args));
        return ExternalProcess.run(Duration.ofSeconds(20), cmd, null);
    }

    @Test
    void anInterceptedRequestGoesThroughTheParentWithTheSecretInjectedHereAndTheNameResolvedThere() {
        int lookups = resolver.calls.get();
        ExternalProcess.Result r = curl(proxy, "--http1.1", "-H", "Authorization: Bearer " + PH,
                "https://upstream.test:" + upstream.port() + "/through?q=1");
        assertThat(r.exit()).as(r.stderr()).isZero();
        // curl trusts only Sallyport's CA: the answer came through Sallyport's interception
        assertThat(r.stdout()).contains("HTTP/1.1 200").contains("GET /through?q=1 host=upstream.test");
        assertThat(upstream.requests).anyMatch(q -> q.contains("/through") && q.contains("Bearer " + VALUE));
        // Squid logs a tunnel when it closes, and this one stays in the pool: the evidence that the parent carried
        // it is that only the parent can resolve upstream.test, and Sallyport never tried
        assertThat(resolver.calls.get()).isEqualTo(lookups);
        assertThat(squid.accessLog()).noneMatch(l -> l.contains(VALUE) || l.contains(PH));
        AuditFields f = proxy.events.await("exchange", e -> "/through".equals(e.path()));
        assertThat(f.status()).isEqualTo(200);
        assertThat(f.ip()).as("the address Sallyport dialed: the parent's").isEqualTo("127.0.0.1");
        assertThat(f.secrets()).containsExactly("TOKEN");
    }

    @Test
    void anHttp2UpstreamConnectionGoesThroughTheParent() {
        int lookups = resolver.calls.get();
        ExternalProcess.Result r = curl(proxy, "--http2", "-H", "Authorization: Bearer " + PH,
                "https://h2.test:" + h2.port() + "/h2-through");
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("HTTP/2 200").contains("x-upstream: h2echo");
        assertThat(h2.seen("/h2-through").fields()).containsEntry("authorization", "Bearer " + VALUE);
        assertThat(resolver.calls.get()).isEqualTo(lookups);
        AuditFields f = proxy.events.await("exchange", e -> "/h2-through".equals(e.path()));
        assertThat(f.upstreamProtocol()).isEqualTo("h2");
    }

    @Test
    void aWebSocketGoesThroughTheParent() throws Exception {
        Trust trust = Trust.of(proxy.caPem);
        OkHttpClient client = new OkHttpClient.Builder()
                .proxy(new java.net.Proxy(java.net.Proxy.Type.HTTP, proxy.address()))
                .sslSocketFactory(trust.context.getSocketFactory(), trust.manager)
                .readTimeout(Duration.ofSeconds(20)).build();
        BlockingQueue<String> events = WebSocketRig.events();
        WebSocket ws = client.newWebSocket(new Request.Builder()
                .url("wss://upstream.test:" + upstream.port() + "/ws").build(), WebSocketRig.listener(events));
        try {
            assertThat(next(events)).isEqualTo("open");
            ws.send("through the parent");
            assertThat(next(events)).isEqualTo("text:echo:through the parent");
            ws.close(1000, null);
            proxy.events.await("websocket_end", f -> "/ws".equals(f.path()));
        } finally {
            client.dispatcher().executorService().shutdown();
            client.connectionPool().evictAll();
        }
        // the upgraded connection is never pooled: its tunnel through the parent closed with it
        squid.awaitLogged("CONNECT upstream.test:" + upstream.port(), "TCP_TUNNEL/200");
    }

    @Test
    void aPassthroughTunnelGoesThroughTheParent() {
        ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(20), List.of("openssl", "s_client",
                "-proxy", "127.0.0.1:" + proxy.port(), "-connect", "pinned.test:" + pinned.port(), "-servername",
                "pinned.test", "-CAfile", root.toString(), "-verify_return_error", "-brief", "-ign_eof"),
                "GET /pinned HTTP/1.1\r\nHost: pinned.test\r\nConnection: close\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThat(r.stdout()).contains("GET /pinned host=pinned.test");
        assertThat(r.stderr()).as("the upstream's own certificate: not intercepted").contains("Verification: OK");
        squid.awaitLogged("CONNECT pinned.test:" + pinned.port(), "TCP_TUNNEL/200");
        AuditFields end = proxy.events.await("tunnel_end", f -> "passthrough".equals(f.tls()));
        assertThat(end.bytesDown()).isPositive();
    }

    @Test
    void aNoProxyDestinationIsDialedDirectlyAfterItsAddressIsChecked() {
        int before = resolver.calls.get();
        ExternalProcess.Result r = curl(proxy, "--http1.1", "https://direct.test:" + direct.port() + "/direct");
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("GET /direct host=direct.test");
        assertThat(resolver.calls.get()).isGreaterThan(before);
        assertThat(squid.accessLog()).noneMatch(l -> l.contains("direct.test"));
    }

    @Test
    void aDeniedRequestNeverReachesTheParent() {
        ExternalProcess.Result r = curl(proxy, "--http1.1", "https://denied.test/x");
        assertThat(r.stdout()).contains("403").contains("X-Sallyport-Reason: no_matching_rule");
        proxy.events.await("connect", f -> "denied.test".equals(f.host()));
        assertThat(squid.accessLog()).noneMatch(l -> l.contains("denied.test"));
    }

    @Test
    void theParentsAddressAsADestinationIsStillDeniedByNetworkDeny() {
        ExternalProcess.Result r = curl(proxy, "--http1.1", "-k", "https://127.0.0.1:" + squid.port + "/");
        assertThat(r.stdout()).contains("HTTP/1.1 403").contains("X-Sallyport-Reason: private_address");
        assertThat(squid.accessLog()).noneMatch(l -> l.contains("CONNECT 127.0.0.1"));
    }

    @Test
    void aParentThatRefusesTheDestinationGivesA502NamingIt() {
        ExternalProcess.Result r = curl(proxy, "--http1.1", "https://" + SquidParent.REFUSED + ":" + upstream.port()
                + "/refused");
        assertThat(r.stdout()).contains("HTTP/1.1 502").contains("X-Sallyport-Reason: upstream_proxy_refused")
                .contains("parent proxy " + squid.address()).contains("403 Forbidden");
        squid.awaitLogged("TCP_DENIED/403", "CONNECT " + SquidParent.REFUSED);
        AuditFields f = proxy.events.await("exchange", e -> "/refused".equals(e.path()));
        assertThat(f.reason()).isEqualTo("upstream_proxy_refused");
        assertThat(f.status()).isEqualTo(502);
    }

    @Test
    void aParentThatIsNotThereGivesA502() throws Exception {
        int closed;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closed = s.getLocalPort();
        }
        try (ProxyFixture p = ProxyFixture.start(policy("127.0.0.1:" + closed, "", dir.resolve("token")),
                new MapResolver(), ProxyFixture.tempDir())) {
            ExternalProcess.Result r = curl(p, "--http1.1", "https://upstream.test:" + upstream.port() + "/gone");
            assertThat(r.stdout()).contains("HTTP/1.1 502")
                    .contains("X-Sallyport-Reason: upstream_proxy_connect_failed");
            assertThat(p.events.await("exchange", e -> "/gone".equals(e.path())).reason())
                    .isEqualTo("upstream_proxy_connect_failed");
        }
    }

    @Test
    void aParentThatWantsCredentialsGetsThemFromTheFileAndA407IsNamedWithout() throws Exception {
        try (SquidParent authed = SquidParent.withCredentials("ci-runner", "pa55:word", "upstream.test")) {
            Path good = Files.writeString(dir.resolve("parent.auth"), "ci-runner:pa55:word\n");
            Path bad = Files.writeString(dir.resolve("parent-bad.auth"), "ci-runner:wrong\n");
            try (ProxyFixture p = ProxyFixture.start(policy(authed.address(), "    credentials: {file: " + good
                    + "}\n", dir.resolve("token")), new MapResolver(), ProxyFixture.tempDir())) {
                ExternalProcess.Result r = curl(p, "--http1.1", "https://upstream.test:" + upstream.port() + "/auth");
                assertThat(r.exit()).as(r.stderr()).isZero();
                assertThat(r.stdout()).contains("HTTP/1.1 200").contains("GET /auth host=upstream.test");
            }
            // the proxy closed: its pooled tunnel too, which Squid logs now, with the user it authenticated
            assertThat(authed.awaitLogged("CONNECT upstream.test:" + upstream.port(), "TCP_TUNNEL/200"))
                    .contains(" ci-runner ");
            for (String credentials : List.of("", "    credentials: {file: " + bad + "}\n")) {
                try (ProxyFixture p = ProxyFixture.start(policy(authed.address(), credentials,
                        dir.resolve("token")), new MapResolver(), ProxyFixture.tempDir())) {
                    ExternalProcess.Result r = curl(p, "--http1.1", "https://upstream.test:" + upstream.port()
                            + "/no-auth");
                    assertThat(r.stdout()).contains("HTTP/1.1 502").contains("X-Sallyport-Reason: upstream_proxy_auth")
                            .contains(credentials.isEmpty() ? "names none" : "refused those");
                    assertThat(p.events.await("exchange", e -> "/no-auth".equals(e.path())).reason())
                            .isEqualTo("upstream_proxy_auth");
                }
            }
        }
    }
}
