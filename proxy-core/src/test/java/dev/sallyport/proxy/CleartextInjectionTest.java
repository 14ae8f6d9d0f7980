package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.RawClient;
import dev.sallyport.proxy.testing.Upstreams;
import dev.sallyport.testing.Trust;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Regression (issue 11 item 12): a secret bound to a host was injected into a plain {@code http://} request to
 * it, so the real value crossed the network in cleartext. Now a placeholder in a request that goes upstream in
 * cleartext is refused ({@code secret_cleartext}, audited) unless the secret says {@code allow_cleartext: true};
 * the same secret is still injected inside an intercepted tunnel, whose upstream leg is TLS.
 */
class CleartextInjectionTest {

    static final String STRICT_VALUE = "st-cleartext-test-value-7f3a9c";
    static final String LOOSE_VALUE = "lo-cleartext-test-value-2b8e41";
    static final String STRICT_PH = "sallyport-ph-cleartextstrictplaceholder";
    static final String LOOSE_PH = "sallyport-ph-cleartextlooseplaceholder";

    static Upstreams up;
    static ProxyFixture proxy;
    static Trust trust;

    @BeforeAll
    static void start() throws Exception {
        up = Upstreams.start("api.test");
        Path strict = Files.writeString(up.dir.resolve("strict"), STRICT_VALUE + "\n");
        Path loose = Files.writeString(up.dir.resolve("loose"), LOOSE_VALUE + "\n");
        String rules = "  - name: api\n    hosts: [api.test, legacy.test]\n    ports: [" + up.plain.port() + ", "
                + up.tls.port() + "]\n";
        String secrets = "secrets:\n"
                + "  - name: STRICT\n    from: file:" + strict + "\n    hosts: [api.test]\n"
                + "    headers: [Authorization]\n    placeholder: " + STRICT_PH + "\n"
                + "  - name: LOOSE\n    from: file:" + loose + "\n    hosts: [legacy.test]\n"
                + "    headers: [Authorization]\n    placeholder: " + LOOSE_PH + "\n    allow_cleartext: true\n";
        String allowPrivate = "api.test:" + up.plain.port() + ", api.test:" + up.tls.port() + ", legacy.test:"
                + up.plain.port();
        proxy = ProxyFixture.start(ProxyFixture.policy(up.root, allowPrivate, "", rules) + secrets,
                new MapResolver().map("api.test", "127.0.0.1").map("legacy.test", "127.0.0.1"), up.dir);
        trust = Trust.of(proxy.caPem);
    }

    @AfterAll
    static void stop() throws Exception {
        proxy.proxy.flushAudit();
        String audit = Files.readString(proxy.auditFile);
        proxy.close();
        up.close();
        assertThat(audit).contains("\"reason\":\"secret_cleartext\"").doesNotContain(STRICT_VALUE)
                .doesNotContain(LOOSE_VALUE);
    }

    static String plainRequest(String host, String path, String authorization) {
        String target = host + ":" + up.plain.port();
        return "GET http://" + target + path + " HTTP/1.1\r\nHost: " + target + "\r\nAuthorization: " + authorization
                + "\r\nConnection: close\r\n\r\n";
    }

    @Test
    void aPlaceholderInAPlainHttpRequestToItsOwnHostIsRefusedAndNothingReachesTheUpstream() {
        int before = up.plain.requests.size();
        for (String[] c : new String[][] {
            {"/bearer", "Bearer " + STRICT_PH},
            {"/basic", "Basic " + Base64.getEncoder().encodeToString(("x-access-token:" + STRICT_PH)
                    .getBytes(StandardCharsets.UTF_8))},
        }) {
            String answer = RawClient.exchange(proxy.address(), plainRequest("api.test", c[0], c[1]));
            assertThat(answer).as(c[0]).startsWith("HTTP/1.1 403 ").contains("X-Sallyport-Reason: secret_cleartext")
                    .doesNotContain(STRICT_VALUE);
            AuditFields f = proxy.events.await("request", e -> c[0].equals(e.path()) && e.reason() != null);
            assertThat(f.decision()).isEqualTo("deny");
            assertThat(f.reason()).isEqualTo("secret_cleartext");
            assertThat(f.secrets()).containsExactly("STRICT");
            assertThat(f.tls()).isEqualTo("none");
        }
        assertThat(up.plain.requests).as("requests the plain upstream saw").hasSize(before);
        assertThat(String.join("\n", up.plain.requests)).doesNotContain(STRICT_VALUE).doesNotContain(STRICT_PH);
        assertThat(proxy.proxy.metrics().scrape())
                .contains("sallyport_secret_refusals_total{reason=\"secret_cleartext\",secret=\"STRICT\"}");
    }

    @Test
    void theSameSecretIsInjectedInsideAnInterceptedTunnel() {
        String answer = RawClient.throughTunnel(proxy.address(), trust, "api.test", up.tls.port(),
                "GET /over-tls HTTP/1.1\r\nHost: api.test:" + up.tls.port() + "\r\nAuthorization: Bearer " + STRICT_PH
                        + "\r\nConnection: close\r\n\r\n");
        assertThat(answer).startsWith("HTTP/1.1 200 ").doesNotContain(STRICT_VALUE);
        assertThat(String.join("\n", up.tls.requests)).contains("/over-tls").contains("Bearer " + STRICT_VALUE);
        assertThat(proxy.events.await("exchange", e -> "/over-tls".equals(e.path())).secrets())
                .containsExactly("STRICT");
    }

    @Test
    void aSecretThatAllowsCleartextIsInjectedIntoPlainHttp() {
        String answer = RawClient.exchange(proxy.address(), plainRequest("legacy.test", "/legacy", "Bearer " + LOOSE_PH));
        assertThat(answer).startsWith("HTTP/1.1 200 ").contains("GET /legacy host=legacy.test")
                .doesNotContain(LOOSE_VALUE);
        assertThat(String.join("\n", up.plain.requests)).contains("Bearer " + LOOSE_VALUE);
        assertThat(proxy.events.await("exchange", e -> "/legacy".equals(e.path())).secrets())
                .containsExactly("LOOSE");
    }
}
