package dev.sallyport.proxy.audit;

import static dev.sallyport.proxy.audit.AuditEvents.TS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.events.ProxyEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class AuditRecordsTest {

    @Test
    void exchangeBecomesARequestRecordWithEveryContractFieldInOrder() {
        String line = AuditRecords.encode(AuditEvents.exchange("r1", "/repos/acme/x"), Instant.EPOCH).orElseThrow();

        assertThat(line).isEqualTo("{\"ts\":\"2026-11-30T01:02:03.456Z\",\"event\":\"request\",\"id\":\"r1\","
                + "\"client\":\"127.0.0.1:50000\",\"host\":\"api.example.com\",\"port\":443,"
                + "\"ip\":\"93.184.216.34\",\"method\":\"GET\",\"path\":\"/repos/acme/x\",\"status\":200,"
                + "\"decision\":\"allow\",\"rule\":\"github-api\",\"reason\":\"allowed_by_rule\","
                + "\"tls\":\"intercepted\",\"sni\":\"api.example.com\",\"bytes_up\":120,\"bytes_down\":4096,"
                + "\"duration_ms\":35,\"secrets\":[\"GITHUB_TOKEN\"]}\n");
    }

    @Test
    void decidedKeepsItsEventNameAndAbsentFieldsAreLeftOut() {
        String line = AuditRecords.encode(AuditEvents.denied("c1"), Instant.EPOCH).orElseThrow();

        assertThat(line).isEqualTo("{\"ts\":\"2026-11-30T01:02:03.456Z\",\"event\":\"connect\",\"id\":\"c1\","
                + "\"client\":\"127.0.0.1:50001\",\"host\":\"evil.example\",\"port\":443,\"method\":\"CONNECT\","
                + "\"status\":403,\"decision\":\"deny\",\"reason\":\"no_matching_rule\"}\n");
    }

    @Test
    void tunnelEndKeepsItsEventName() {
        AuditFields f = new AuditFields("t1", null, null, "db.example", 5432, "10.20.0.5", null, null, null, "allow",
                "internal-db", null, "passthrough", "db.example", 10L, 20L, 3000L, null);

        String line = AuditRecords.encode(new ProxyEvent.TunnelEnded(TS, "websocket_end", f), Instant.EPOCH)
                .orElseThrow();

        assertThat(line).startsWith("{\"ts\":\"2026-11-30T01:02:03.456Z\",\"event\":\"websocket_end\",\"id\":\"t1\"")
                .contains("\"tls\":\"passthrough\"", "\"duration_ms\":3000");
    }

    @Test
    void reloadCarriesResultSourceAndErrors() {
        ProxyEvent.Reloaded r = new ProxyEvent.Reloaded(TS, "failure", "/etc/sallyport/policy.yaml",
                List.of("policy.yaml:3:5: rules[0].hosts[0]: '*' is not a valid pattern (expected: a host)"));

        assertThat(AuditRecords.encode(r, Instant.EPOCH).orElseThrow()).isEqualTo(
                "{\"ts\":\"2026-11-30T01:02:03.456Z\",\"event\":\"reload\",\"result\":\"failure\","
                        + "\"source\":\"/etc/sallyport/policy.yaml\",\"errors\":[\"policy.yaml:3:5: rules[0].hosts[0]: "
                        + "'*' is not a valid pattern (expected: a host)\"]}\n");
    }

    @Test
    void gaugeOnlyEventsAreNotAuditRecords() {
        List<ProxyEvent> gauges = List.of(new ProxyEvent.ConnectionOpened(TS), new ProxyEvent.ConnectionClosed(TS),
                new ProxyEvent.TunnelOpened(TS), new ProxyEvent.TunnelClosed(TS),
                new ProxyEvent.CertMinted(TS, "a.example", Duration.ofMillis(5)),
                new ProxyEvent.CertCacheHit(TS, "a.example"),
                new ProxyEvent.UpstreamConnected(TS, "a.example", Duration.ofMillis(5)),
                new ProxyEvent.SecretInjected(TS, "GITHUB_TOKEN"));

        for (ProxyEvent e : gauges) {
            assertThat(AuditRecords.isRecord(e)).as(e.toString()).isFalse();
            assertThat(AuditRecords.encode(e, Instant.EPOCH)).as(e.toString()).isEmpty();
        }
    }

    @Test
    void queryStringsAndFragmentsNeverReachTheRecord() {
        String line = AuditRecords.encode(AuditEvents.exchange("r2", "/v1/chat?api_key=sk-SECRET123&x=1#frag-SECRET"),
                Instant.EPOCH).orElseThrow();

        assertThat(line).contains("\"path\":\"/v1/chat\"").doesNotContain("SECRET", "?", "api_key", "#");
        assertThat(AuditRecords.pathWithoutQuery("/a#b?c")).isEqualTo("/a");
        assertThat(AuditRecords.pathWithoutQuery("?x")).isEmpty();
    }

    @Test
    void timestampIsUtcWithMillisecondsTruncated() {
        assertThat(AuditRecords.timestamp(Instant.parse("2026-11-30T23:59:59.999999999Z")))
                .isEqualTo("2026-11-30T23:59:59.999Z");
        assertThat(AuditRecords.timestamp(Instant.parse("2026-11-30T01:02:03Z"))).isEqualTo("2026-11-30T01:02:03.000Z");
        assertThat(AuditRecords.timestamp(Instant.parse("2026-11-30T01:02:03.005Z"))).isEqualTo("2026-11-30T01:02:03.005Z");
        assertThat(AuditRecords.timestamp(Instant.parse("2026-11-30T01:02:04.050Z"))).isEqualTo("2026-11-30T01:02:04.050Z");
        assertThat(AuditRecords.timestamp(Instant.parse("1999-12-31T23:59:59.5Z"))).isEqualTo("1999-12-31T23:59:59.500Z");
    }

    @Test
    void missingTimestampFallsBackToTheClock() {
        String line = AuditRecords.encode(new ProxyEvent.Decided(null, "request", null),
                Instant.parse("2026-01-02T03:04:05.006Z")).orElseThrow();

        assertThat(line).isEqualTo("{\"ts\":\"2026-01-02T03:04:05.006Z\",\"event\":\"request\"}\n");
    }
}
