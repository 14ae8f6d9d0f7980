package dev.sallyport.proxy.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.audit.AuditLog;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ProxyMetricsTest {

    private static final Instant TS = Instant.parse("2026-11-30T00:00:00Z");

    private final ProxyMetrics metrics = new ProxyMetrics();

    @AfterEach
    void close() {
        metrics.close();
    }

    @Test
    void contractMetricsExistBeforeAnyTraffic() {
        String text = metrics.scrape();

        assertSample(text, "sallyport_connections_active", 0);
        assertSample(text, "sallyport_tunnels_active", 0);
        assertSample(text, "sallyport_cert_cache_hits_total", 0);
        assertSample(text, "sallyport_bytes_total{direction=\"up\"}", 0);
        assertSample(text, "sallyport_bytes_total{direction=\"down\"}", 0);
        assertSample(text, "sallyport_policy_reloads_total{result=\"success\"}", 0);
        assertSample(text, "sallyport_policy_reloads_total{result=\"failure\"}", 0);
        assertSample(text, "sallyport_audit_dropped_total", 0);
        assertSample(text, "sallyport_cert_mint_seconds_count", 0);
        assertSample(text, "sallyport_upstream_connect_seconds_count", 0);
    }

    @Test
    void eventsMoveTheContractMetrics() {
        metrics.on(decided("allow", "github-api"));
        metrics.on(decided("allow", "github-api"));
        metrics.on(decided("deny", null));
        metrics.on(decided("would_deny", "no-uploads"));
        metrics.on(new ProxyEvent.ExchangeCompleted(TS, fields("allow", "github-api", 100L, 2000L, null)));
        metrics.on(new ProxyEvent.TunnelEnded(TS, "tunnel_end", fields("allow", "db", 7L, 9L, "passthrough")));
        metrics.on(new ProxyEvent.TunnelEnded(TS, "tunnel_end", fields("allow", "x", 5000L, 5000L, "intercepted")));
        metrics.on(new ProxyEvent.TunnelEnded(TS, "websocket_end", fields("allow", "ws", 3L, 4L, "intercepted")));
        metrics.on(new ProxyEvent.ConnectionOpened(TS));
        metrics.on(new ProxyEvent.ConnectionOpened(TS));
        metrics.on(new ProxyEvent.ConnectionClosed(TS));
        metrics.on(new ProxyEvent.TunnelOpened(TS));
        metrics.on(new ProxyEvent.CertMinted(TS, "a.example", Duration.ofMillis(12)));
        metrics.on(new ProxyEvent.CertCacheHit(TS, "a.example"));
        metrics.on(new ProxyEvent.UpstreamConnected(TS, "a.example", Duration.ofMillis(30)));
        metrics.on(new ProxyEvent.SecretInjected(TS, "GITHUB_TOKEN"));
        metrics.on(new ProxyEvent.Reloaded(TS, "failure", "p.yaml", List.of("p.yaml:1:1: x: y (expected: z)")));
        metrics.auditDropped(3);

        String text = metrics.scrape();

        assertSample(text, "sallyport_requests_total{decision=\"allow\",rule=\"github-api\"}", 2);
        assertSample(text, "sallyport_requests_total{decision=\"deny\",rule=\"none\"}", 1);
        assertSample(text, "sallyport_requests_total{decision=\"would_deny\",rule=\"no-uploads\"}", 1);
        assertSample(text, "sallyport_bytes_total{direction=\"up\"}", 110);
        assertSample(text, "sallyport_bytes_total{direction=\"down\"}", 2013);
        assertSample(text, "sallyport_connections_active", 1);
        assertSample(text, "sallyport_tunnels_active", 1);
        assertSample(text, "sallyport_cert_mint_seconds_count", 1);
        assertSample(text, "sallyport_cert_mint_seconds_bucket{le=\"0.025\"}", 1);
        assertSample(text, "sallyport_cert_cache_hits_total", 1);
        assertSample(text, "sallyport_upstream_connect_seconds_count", 1);
        assertSample(text, "sallyport_secrets_injected_total{secret=\"GITHUB_TOKEN\"}", 1);
        assertSample(text, "sallyport_policy_reloads_total{result=\"failure\"}", 1);
        assertSample(text, "sallyport_audit_dropped_total", 3);
    }

    @Test
    void exchangesAreCountedByTheClientsProtocolAndHttp2StreamsAreCounted() {
        assertSample(metrics.scrape(), "sallyport_exchanges_total{protocol=\"h2\"}", 0);
        metrics.on(new ProxyEvent.ExchangeCompleted(TS, exchange("h2", "allow", null, 40L)));
        metrics.on(new ProxyEvent.ExchangeCompleted(TS, exchange("h2", "allow", null, 60L)));
        metrics.on(new ProxyEvent.ExchangeCompleted(TS, exchange("http/1.1", "allow", null, 5L)));
        metrics.on(new ProxyEvent.Decided(TS, "request", exchange("h2", "deny", "h2_refused_stream", null)));
        metrics.on(new ProxyEvent.Decided(TS, "request", exchange("h2", "deny", "client_exchange_limit", null)));
        metrics.on(new ProxyEvent.Decided(TS, "request", exchange("h2", "allow", "allowed_by_rule", null)));
        metrics.on(new ProxyEvent.Decided(TS, "request", exchange("http/1.1", "deny", "no_matching_rule", null)));
        for (int i = 0; i < 3; i++) {
            metrics.on(new ProxyEvent.StreamOpened(TS));
        }
        metrics.on(new ProxyEvent.StreamClosed(TS));

        String text = metrics.scrape();

        assertSample(text, "sallyport_exchanges_total{protocol=\"h2\"}", 2);
        assertSample(text, "sallyport_exchanges_total{protocol=\"http/1.1\"}", 1);
        assertSample(text, "sallyport_exchange_duration_seconds_count{protocol=\"h2\"}", 2);
        assertSample(text, "sallyport_exchange_duration_seconds_sum{protocol=\"h2\"}", 0.1);
        assertSample(text, "sallyport_h2_streams_opened_total", 3);
        assertSample(text, "sallyport_h2_streams_active", 2);
        assertSample(text, "sallyport_h2_streams_refused_total{reason=\"h2_refused_stream\"}", 1);
        assertSample(text, "sallyport_h2_streams_refused_total{reason=\"client_exchange_limit\"}", 1);
        assertThat(text).as("an allowed stream and an HTTP/1.1 refusal are no refused streams")
                .doesNotContain("sallyport_h2_streams_refused_total{reason=\"allowed_by_rule\"}")
                .doesNotContain("sallyport_h2_streams_refused_total{reason=\"no_matching_rule\"}");
    }

    private static AuditFields exchange(String protocol, String decision, String reason, Long durationMs) {
        return new AuditFields("id", null, null, "a.example", 443, null, "GET", "/", 200, decision, "r", reason,
                "intercepted", null, 0L, 0L, durationMs, null, null, protocol);
    }

    @Test
    void auditFailureListenerDrivesDroppedAndFailingGauge() {
        metrics.failed("sallyport: audit log x: write failed");
        metrics.dropped(2);
        assertSample(metrics.scrape(), "sallyport_audit_dropped_total", 2);
        assertSample(metrics.scrape(), "sallyport_audit_failing", 1);

        metrics.recovered();
        assertSample(metrics.scrape(), "sallyport_audit_failing", 0);
    }

    @Test
    void aFailingAuditLogShowsUpAsDroppedRecords() {
        OutputStream broken = new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                throw new IOException("read-only file system");
            }
        };
        try (AuditLog log = AuditLog.to(broken, InstantSource.system(), metrics)) {
            log.on(decided("allow", "r"));
            log.flush();
            assertThat(log.accepting()).isFalse();
        }
        assertSample(metrics.scrape(), "sallyport_audit_dropped_total", 1);
        assertSample(metrics.scrape(), "sallyport_audit_failing", 1);
    }

    @Test
    void jvmAndNettyBasicsArePresent() {
        assertThat(metrics.scrape()).contains("jvm_memory_used_bytes", "jvm_threads_live_threads",
                "process_uptime_seconds", "system_cpu_count", "netty_allocator_memory_used",
                "netty_direct_memory_used_bytes");
    }

    @Test
    void labelSetsAreBounded() {
        for (int i = 0; i < ProxyMetrics.MAX_LABEL_SETS + 50; i++) {
            metrics.on(decided("allow", "rule-" + i));
        }
        String text = metrics.scrape();
        assertThat(text.lines().filter(l -> l.startsWith("sallyport_requests_total{"))).hasSize(
                ProxyMetrics.MAX_LABEL_SETS + 1);
        assertSample(text, "sallyport_requests_total{decision=\"allow\",rule=\"other\"}", 50);
    }

    /** The sample named exactly so (metric name and labels) has this value. */
    static void assertSample(String scrape, String sample, double value) {
        List<String> lines = scrape.lines().filter(l -> l.startsWith(sample + " ")).toList();
        assertThat(lines).as("sample %s in:%n%s", sample, scrape).hasSize(1);
        assertThat(Double.parseDouble(lines.getFirst().substring(sample.length() + 1))).as(sample).isEqualTo(value);
    }

    private static ProxyEvent.Decided decided(String decision, String rule) {
        return new ProxyEvent.Decided(TS, "request", fields(decision, rule, null, null, null));
    }

    private static AuditFields fields(String decision, String rule, Long up, Long down, String tls) {
        return new AuditFields("id", null, null, "a.example", 443, null, "GET", "/", null, decision, rule, null, tls,
                null, up, down, null, null);
    }
}
