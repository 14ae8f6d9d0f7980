package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.RawClient;
import dev.sallyport.proxy.testing.RecordingListener;
import org.junit.jupiter.api.Test;

/**
 * Regression: a request the policy allows but whose name resolves to a denied address was recorded as an allow
 * decision (and counted so in sallyport_requests_total) followed by a denied exchange.
 */
class DialDenyTest {

    @Test
    void allowedNameResolvingToDeniedAddressIsRecordedAndCountedAsOneDeny() throws Exception {
        RecordingListener events = new RecordingListener();
        MapResolver resolver = new MapResolver().map("rebound.example.test", "127.0.0.1");
        var policy = PolicyLoader.parse("""
                rules:
                  - name: rebound
                    hosts: [rebound.example.test]
                    ports: [80]
                """, "dial-deny.yaml");
        try (SallyportProxy proxy = SallyportProxy.start(ProxyOptions.of(policy)
                .withCa(CertificateAuthority.ephemeral("dial-deny-test"))
                .withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0))
                .withResolver(resolver).withListener(events))) {
            String answer = RawClient.exchange(proxy.address(),
                    "GET http://rebound.example.test/ HTTP/1.1\r\nHost: rebound.example.test\r\n\r\n");
            assertThat(answer).startsWith("HTTP/1.1 403 ").contains("X-Sallyport-Reason: private_address");
            AuditFields decided = events.await("request", f -> f.reason() != null);
            assertThat(decided.decision()).isEqualTo("deny");
            assertThat(decided.reason()).isEqualTo("private_address");
            assertThat(decided.rule()).isEqualTo("rebound");
            assertThat(events.all("request")).allSatisfy(f -> assertThat(f.decision()).isEqualTo("deny"));
            String metrics = proxy.metrics().scrape();
            assertThat(metrics).contains("sallyport_requests_total{decision=\"deny\",rule=\"rebound\"} 1.0")
                    .doesNotContain("sallyport_requests_total{decision=\"allow\",rule=\"rebound\"}");
        }
    }
}
