package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.EchoUpstream;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.TestPki;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** CONNECT + interception with curl and openssl against a real HTTPS upstream on loopback. */
class InterceptTest {

    static Path dir;
    static TestPki pki;
    static EchoUpstream upstream;
    static Path root;

    @BeforeAll
    static void upstream() throws Exception {
        dir = ProxyFixture.tempDir();
        pki = TestPki.create();
        root = pki.rootPem(dir);
        upstream = EchoUpstream.https(pki.issue("upstream.test"));
    }

    @AfterAll
    static void stop() {
        upstream.close();
    }

    ProxyFixture proxy(String allowPrivate, String rules) throws Exception {
        MapResolver resolver = new MapResolver().map("upstream.test", "127.0.0.1");
        return ProxyFixture.start(ProxyFixture.policy(root, allowPrivate, "", rules), resolver, dir);
    }

    String allowUpstream() {
        return "  - name: upstream\n    hosts: [upstream.test]\n    ports: [" + upstream.port() + "]\n";
    }

    ExternalProcess.Result curl(ProxyFixture p, String... args) {
        List<String> cmd = new ArrayList<>(List.of("curl", "--http1.1", "-sS", "--max-time", "10", "-x", p.proxyUrl(),
                "--cacert", p.caPem.toString(), "-D", "-", "--noproxy", ""));
        cmd.addAll(List.of(args));
        return ExternalProcess.run(Duration.ofSeconds(20), cmd, null);
    }

    @Test
    void curlThroughInterceptedTunnelReachesUpstreamAndIsAudited() throws Exception {
        try (ProxyFixture p = proxy("upstream.test:" + upstream.port(), allowUpstream())) {
            String url = "https://upstream.test:" + upstream.port() + "/echo?token=hunter2";
            ExternalProcess.Result r = curl(p, url);
            assertThat(r.exit()).as(r.stderr()).isZero();
            assertThat(r.stdout()).contains("HTTP/1.1 200").contains("GET /echo?token=hunter2 host=upstream.test:"
                    + upstream.port());
            AuditFields connect = p.events.await("connect", f -> true);
            assertThat(connect.decision()).isEqualTo("allow");
            assertThat(connect.rule()).isEqualTo("upstream");
            assertThat(connect.arrival()).isEqualTo("explicit");
            AuditFields exchange = p.events.await("exchange", f -> true);
            assertThat(exchange.arrival()).isEqualTo("explicit");
            assertThat(exchange.status()).isEqualTo(200);
            assertThat(exchange.ip()).isEqualTo("127.0.0.1");
            assertThat(exchange.path()).isEqualTo("/echo");
            assertThat(exchange.tls()).isEqualTo("intercepted");
            assertThat(exchange.sni()).isEqualTo("upstream.test");
            assertThat(exchange.bytesDown()).isPositive();
            assertThat(p.events.events.toString()).doesNotContain("hunter2");
            p.events.await("tunnel_end", f -> f.durationMs() != null);
        }
    }

    @Test
    void withoutAllowPrivateTheLoopbackUpstreamIsDeniedPrivateAddress() throws Exception {
        try (ProxyFixture p = proxy("", allowUpstream())) {
            int before = upstream.requests.size();
            ExternalProcess.Result r = curl(p, "https://upstream.test:" + upstream.port() + "/echo");
            assertThat(r.stdout()).contains("HTTP/1.1 403").contains("X-Sallyport-Reason: private_address");
            assertThat(upstream.requests).hasSize(before);
            AuditFields ex = p.events.await("exchange", f -> true);
            assertThat(ex.reason()).isEqualTo("private_address");
            assertThat(ex.decision()).isEqualTo("deny");
        }
    }

    @Test
    void connectToUnlistedPortIsRefusedWithoutAnyDnsLookup() throws Exception {
        try (ProxyFixture p = proxy("upstream.test:" + upstream.port(), allowUpstream())) {
            ExternalProcess.Result r = curl(p, "https://upstream.test:8443/");
            assertThat(r.stdout()).contains("HTTP/1.1 403").contains("X-Sallyport-Reason: port_not_allowed");
            assertThat(p.resolver.calls.get()).isZero();
            AuditFields connect = p.events.await("connect", f -> true);
            assertThat(connect.decision()).isEqualTo("deny");
            assertThat(connect.port()).isEqualTo(8443);
        }
    }
}
