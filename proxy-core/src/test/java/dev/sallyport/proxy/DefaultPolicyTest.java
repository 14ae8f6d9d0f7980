package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.Policy;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.RawClient;
import dev.sallyport.proxy.testing.RecordingListener;
import org.junit.jupiter.api.Test;

/** The built-in default policy: the proxy starts, answers /healthz, and denies everything without a lookup. */
class DefaultPolicyTest {

    @Test
    void defaultPolicyDeniesEverythingAndIsHealthy() throws Exception {
        MapResolver resolver = new MapResolver().map("example.test", "127.0.0.1");
        try (SallyportProxy proxy = SallyportProxy.start(ProxyOptions.of(Policy.defaults())
                .withCa(CertificateAuthority.ephemeral("default-test"))
                .withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0))
                .withResolver(resolver))) {
            String connect = RawClient.exchange(proxy.address(),
                    "CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n");
            assertThat(connect).startsWith("HTTP/1.1 403 ").contains("X-Sallyport-Reason: no_matching_rule");
            String plain = RawClient.exchange(proxy.address(),
                    "GET http://example.test/ HTTP/1.1\r\nHost: example.test\r\n\r\n");
            assertThat(plain).startsWith("HTTP/1.1 403 ").contains("X-Sallyport-Reason: no_matching_rule");
            assertThat(resolver.calls.get()).isZero();
            String health = RawClient.exchange(proxy.adminAddress(),
                    "GET /healthz HTTP/1.1\r\nHost: admin\r\nConnection: close\r\n\r\n");
            assertThat(health).startsWith("HTTP/1.1 200 ");
        }
    }

    @Test
    void deniedPlainRequestAuditNamesTheHostItWanted() throws Exception {
        RecordingListener events = new RecordingListener();
        try (SallyportProxy proxy = SallyportProxy.start(ProxyOptions.of(Policy.defaults())
                .withCa(CertificateAuthority.ephemeral("default-test"))
                .withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0))
                .withResolver(new MapResolver()).withListener(events))) {
            RawClient.exchange(proxy.address(), "GET http://wanted.example.test:8080/x?q=1 HTTP/1.1\r\nHost: wanted.example.test:8080\r\n\r\n");
            AuditFields denied = events.await("request", f -> "deny".equals(f.decision()));
            assertThat(denied.host()).isEqualTo("wanted.example.test");
            assertThat(denied.port()).isEqualTo(8080);
            assertThat(denied.path()).isEqualTo("/x");
            assertThat(denied.reason()).isEqualTo("no_matching_rule");

            RawClient.exchange(proxy.address(), "CONNECT wanted.example.test:443 HTTP/1.1\r\nHost: wanted.example.test:443\r\n\r\n");
            AuditFields connect = events.await("connect", f -> "deny".equals(f.decision()));
            assertThat(connect.host()).isEqualTo("wanted.example.test");
            assertThat(connect.tls()).as("refused before any TLS").isEqualTo("none");
        }
    }
}
