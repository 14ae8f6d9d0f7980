package dev.sallyport.proxy.metrics;

import dev.sallyport.policy.Identities;
import dev.sallyport.proxy.audit.AuditFailureListener;
import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.events.ProxyEvent;
import dev.sallyport.proxy.events.ProxyEventListener;
import dev.sallyport.proxy.limits.ClientSlots;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.LoggerFactory;

/**
 * The proxy's metrics (the names in docs/REFERENCE.md), fed by the same {@link ProxyEvent}s as the audit log.
 *
 * <p>What counts where, so nothing is counted twice:
 * <ul>
 *   <li>{@code sallyport_requests_total{decision,rule}}: one per {@link ProxyEvent.Decided} (a CONNECT or a
 *       request decision, allowed or not). {@link ProxyEvent.ExchangeCompleted} does not count: it is the
 *       same request finishing.</li>
 *   <li>{@code sallyport_bytes_total{direction}}: bytes of {@link ProxyEvent.ExchangeCompleted}, and of
 *       {@link ProxyEvent.TunnelEnded} except an intercepted {@code tunnel_end} (its bytes are the
 *       exchanges inside it, already counted). Passthrough tunnels and WebSocket relays count here.</li>
 *   <li>{@code sallyport_secret_refusals_total{reason,secret}}: requests refused because of a secret.</li>
 *   <li>{@code sallyport_secrets_retired_dropped_total}: one per {@link ProxyEvent.RetiredValueDropped}.</li>
 *   <li>{@code sallyport_exchanges_total{protocol}} and {@code sallyport_exchange_duration_seconds{protocol}}: one
 *       per {@link ProxyEvent.ExchangeCompleted}, by the client's protocol ({@code http/1.1}, {@code h2}).</li>
 *   <li>{@code sallyport_h2_streams_opened_total}, {@code sallyport_h2_streams_active}: HTTP/2 streams the codec
 *       accepted; {@code sallyport_h2_streams_refused_total{reason}}: HTTP/2 requests refused before anything
 *       went upstream (a {@code Decided} request with decision {@code deny}: the policy, a limit, a malformed head,
 *       the codec's own resets), by reason.</li>
 *   <li>{@code sallyport_identity_requests_total{identity,decision}} and
 *       {@code sallyport_identity_bytes_total{identity,direction}}: the same decisions and bytes by the client's
 *       identity, named only when {@code proxy.metrics_identities} lists it, else {@code other} ({@code anonymous}
 *       for clients without one): an identity is a registration's name, one per CI job, and a label value per job
 *       would grow without bound.</li>
 *   <li>Gauges from the opened/closed events; timers from {@code CertMinted} and {@code UpstreamConnected}.</li>
 * </ul>
 * Label values come from the policy (rule and secret names); at most {@value #MAX_LABEL_SETS} distinct
 * label sets per metric are kept, further ones are counted under {@code "other"}.
 */
public final class ProxyMetrics implements ProxyEventListener, AuditFailureListener, AutoCloseable {

    static final int MAX_LABEL_SETS = 1000;

    private final PrometheusMeterRegistry registry;
    private final JvmGcMetrics gcMetrics = new JvmGcMetrics();
    /** The JVM and Netty meters, bound off the start-up path (JMX makes them the slowest part of it). */
    private final CompletableFuture<Void> runtimeMeters;
    private final AtomicLong connections = new AtomicLong();
    private final AtomicLong tunnels = new AtomicLong();
    private final AtomicLong auditFailing = new AtomicLong();
    private final AtomicLong h2Streams = new AtomicLong();
    private final Counter h2StreamsOpened;
    private final Timer certMint;
    private final Timer upstreamConnect;
    private final Counter certCacheHits;
    private final Counter bytesUp;
    private final Counter bytesDown;
    private final Counter reloadSuccess;
    private final Counter reloadFailure;
    private final Counter auditDropped;
    private final Counter retiredDropped;
    private final Counter clientConnectionRefusals;
    private final Counter clientTunnelRefusals;
    private final Counter clientExchangeRefusals;
    private final Map<String, Counter> requests = new ConcurrentHashMap<>();
    private final Map<String, Counter> secrets = new ConcurrentHashMap<>();
    private final Map<String, Counter> secretRefusals = new ConcurrentHashMap<>();
    private final Map<String, Counter> exchanges = new ConcurrentHashMap<>();
    private final Map<String, Timer> exchangeDurations = new ConcurrentHashMap<>();
    private final Map<String, Counter> h2Refusals = new ConcurrentHashMap<>();
    private final Map<String, Counter> identityRequests = new ConcurrentHashMap<>();
    private final Map<String, Counter> identityBytes = new ConcurrentHashMap<>();
    private volatile Supplier<List<String>> namedIdentities = List::of;

    /** A Prometheus registry with the proxy's meters, JVM basics and Netty allocator basics. */
    public ProxyMetrics() {
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        Gauge.builder("sallyport.connections.active", connections, AtomicLong::get)
                .description("Client connections open now").register(registry);
        Gauge.builder("sallyport.tunnels.active", tunnels, AtomicLong::get)
                .description("CONNECT tunnels open now").register(registry);
        certMint = Timer.builder("sallyport.cert.mint").description("Time to mint a leaf certificate")
                .serviceLevelObjectives(ms(1), ms(5), ms(10), ms(25), ms(50), ms(100), ms(250), ms(500), ms(1000))
                .register(registry);
        upstreamConnect = Timer.builder("sallyport.upstream.connect")
                .description("Time to connect upstream (TCP, and TLS when intercepting)")
                .serviceLevelObjectives(ms(5), ms(10), ms(25), ms(50), ms(100), ms(250), ms(500), ms(1000), ms(2500),
                        ms(5000), ms(10_000))
                .register(registry);
        certCacheHits = Counter.builder("sallyport.cert.cache.hits").description("Leaf certificates served from cache")
                .register(registry);
        bytesUp = bytes("up");
        bytesDown = bytes("down");
        reloadSuccess = reloads("success");
        reloadFailure = reloads("failure");
        auditDropped = Counter.builder("sallyport.audit.dropped")
                .description("Audit records lost (queue full or write failed); must stay 0").register(registry);
        retiredDropped = Counter.builder("sallyport.secrets.retired.dropped")
                .description("Values retired by a reload and then dropped from scrubbing to keep the bound")
                .register(registry);
        Gauge.builder("sallyport.audit.failing", auditFailing, AtomicLong::get)
                .description("1 while the audit log is failing and new requests are refused").register(registry);
        clientConnectionRefusals = clientLimit("connections");
        clientTunnelRefusals = clientLimit("tunnels");
        clientExchangeRefusals = clientLimit("exchanges");
        h2StreamsOpened = Counter.builder("sallyport.h2.streams.opened")
                .description("HTTP/2 streams of clients the codec accepted").register(registry);
        Gauge.builder("sallyport.h2.streams.active", h2Streams, AtomicLong::get)
                .description("HTTP/2 streams of clients open now").register(registry);
        for (String protocol : PROTOCOLS) {
            exchange(protocol);
        }
        runtimeMeters = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("sallyport-metrics-bind").start(() -> {
            try {
                new JvmMemoryMetrics().bindTo(registry);
                gcMetrics.bindTo(registry);
                new JvmThreadMetrics().bindTo(registry);
                new ClassLoaderMetrics().bindTo(registry);
                new ProcessorMetrics().bindTo(registry);
                new UptimeMetrics().bindTo(registry);
                NettyMetrics.bindTo(registry);
            } catch (RuntimeException | LinkageError e) {
                // the proxy's own meters are all there; only JVM or Netty figures are missing
                LoggerFactory.getLogger(ProxyMetrics.class).warn("JVM and Netty meters not bound: {}", e.toString());
            } finally {
                runtimeMeters.complete(null);
            }
        });
    }

    /** The registry, once the JVM and Netty meters are bound too. */
    public PrometheusMeterRegistry registry() {
        runtimeMeters.join();
        return registry;
    }

    /** The Prometheus text exposition (format 0.0.4), JVM and Netty meters included. */
    public String scrape() {
        runtimeMeters.join();
        return registry.scrape(NettyMetrics.CONTENT_TYPE);
    }

    /** Where the identities the per-identity meters name come from: the policy in force, so a reload applies. */
    public void namedIdentities(Supplier<List<String>> names) {
        namedIdentities = names;
    }

    /** Counts audit records that were lost. */
    public void auditDropped(long n) {
        if (n > 0) {
            auditDropped.increment((double) n);
        }
    }

    @Override
    public void on(ProxyEvent event) {
        switch (event) {
            case ProxyEvent.Decided d -> {
                request(d.fields());
                identityRequest(d.fields());
                secretRefusal(d.fields());
                clientLimitRefusal(d.fields());
                if ("request".equals(d.event())) {
                    h2Refusal(d.fields());
                }
            }
            case ProxyEvent.ExchangeCompleted e -> {
                bytes(e.fields());
                secretRefusal(e.fields());     // refused in the body: the head was already counted as allowed
                exchangeCompleted(e.fields());
            }
            case ProxyEvent.TunnelEnded t -> {
                boolean interceptedTunnel = "tunnel_end".equals(t.event()) && t.fields() != null
                        && "intercepted".equals(t.fields().tls());
                if (!interceptedTunnel) {
                    bytes(t.fields());
                }
            }
            case ProxyEvent.Reloaded r -> ("success".equals(r.result()) ? reloadSuccess : reloadFailure).increment();
            case ProxyEvent.DnsAnswered ignored -> { }
            case ProxyEvent.VersionRefused ignored -> { }
            case ProxyEvent.ConnectionOpened ignored -> connections.incrementAndGet();
            case ProxyEvent.ConnectionClosed ignored -> connections.decrementAndGet();
            case ProxyEvent.TunnelOpened ignored -> tunnels.incrementAndGet();
            case ProxyEvent.TunnelClosed ignored -> tunnels.decrementAndGet();
            case ProxyEvent.StreamOpened ignored -> {
                h2StreamsOpened.increment();
                h2Streams.incrementAndGet();
            }
            case ProxyEvent.StreamClosed ignored -> h2Streams.decrementAndGet();
            case ProxyEvent.CertMinted m -> record(certMint, m.took());
            case ProxyEvent.CertCacheHit ignored -> certCacheHits.increment();
            case ProxyEvent.UpstreamConnected u -> record(upstreamConnect, u.took());
            case ProxyEvent.SecretInjected s -> secret(s.secret()).increment();
            case ProxyEvent.RetiredValueDropped ignored -> retiredDropped.increment();
        }
    }

    @Override
    public void failed(String message) {
        auditFailing.set(1);
    }

    @Override
    public void dropped(long records) {
        auditDropped(records);
    }

    @Override
    public void recovered() {
        auditFailing.set(0);
    }

    @Override
    public void close() {
        runtimeMeters.join();
        gcMetrics.close();
        registry.close();
    }

    private void request(AuditFields f) {
        String decision = f == null || f.decision() == null ? "unknown" : f.decision();
        String rule = f == null || f.rule() == null ? "none" : f.rule();
        String key = decision + '\u0000' + rule;
        Counter c = requests.get(key);
        if (c == null) {
            if (requests.size() >= MAX_LABEL_SETS) {
                rule = "other";
                key = decision + '\u0000' + rule;
            }
            String d = decision;
            String r = rule;
            c = requests.computeIfAbsent(key, k -> Counter.builder("sallyport.requests")
                    .description("Decisions on CONNECTs and requests, by decision and rule")
                    .tag("decision", d).tag("rule", r).register(registry));
        }
        c.increment();
    }

    private void bytes(AuditFields f) {
        if (f == null) {
            return;
        }
        if (f.bytesUp() != null && f.bytesUp() > 0) {
            bytesUp.increment(f.bytesUp());
            identityBytes(f, "up").increment(f.bytesUp());
        }
        if (f.bytesDown() != null && f.bytesDown() > 0) {
            bytesDown.increment(f.bytesDown());
            identityBytes(f, "down").increment(f.bytesDown());
        }
    }

    /** The identity label of a record: a name {@code proxy.metrics_identities} lists, {@code anonymous} or {@code other}. */
    private String identity(AuditFields f) {
        String id = f == null ? null : f.identity();
        if (id == null || id.equals(Identities.ANONYMOUS)) {
            return Identities.ANONYMOUS;
        }
        return namedIdentities.get().contains(id) ? id : "other";
    }

    private void identityRequest(AuditFields f) {
        String identity = identity(f);
        String decision = f == null || f.decision() == null ? "unknown" : f.decision();
        identityRequests.computeIfAbsent(identity + '\u0000' + decision, k -> Counter.builder("sallyport.identity.requests")
                .description("Decisions on CONNECTs and requests, by the client's identity (named ones only) and decision")
                .tag("identity", identity).tag("decision", decision).register(registry)).increment();
    }

    private Counter identityBytes(AuditFields f, String direction) {
        String identity = identity(f);
        return identityBytes.computeIfAbsent(identity + '\u0000' + direction, k -> Counter.builder("sallyport.identity.bytes")
                .description("Bytes relayed by the client's identity (named ones only), up = client to upstream")
                .tag("identity", identity).tag("direction", direction).register(registry));
    }

    private Counter secret(String name) {
        String label = name == null ? "unknown" : name;
        Counter c = secrets.get(label);
        if (c == null) {
            String l = secrets.size() >= MAX_LABEL_SETS ? "other" : label;
            c = secrets.computeIfAbsent(l, k -> Counter.builder("sallyport.secrets.injected")
                    .description("Secrets injected into requests, by secret name").tag("secret", k).register(registry));
        }
        return c;
    }

    /**
     * {@code sallyport_secret_refusals_total{reason,secret}}: a request refused because of a secret (at the head:
     * a {@code Decided}; in the body: the {@code ExchangeCompleted}; each request has only one of them denied).
     */
    private void secretRefusal(AuditFields f) {
        if (f == null || !"deny".equals(f.decision()) || f.reason() == null || !f.reason().startsWith("secret_")) {
            return;
        }
        // secret_unknown_placeholder names no secret
        String secret = f.secrets() == null || f.secrets().isEmpty() ? "none" : f.secrets().getFirst();
        String key = f.reason() + '\u0000' + secret;
        String[] labels = secretRefusals.size() >= MAX_LABEL_SETS && !secretRefusals.containsKey(key)
                ? new String[] {f.reason(), "other"} : new String[] {f.reason(), secret};
        secretRefusals.computeIfAbsent(labels[0] + '\u0000' + labels[1], k -> Counter.builder("sallyport.secret.refusals")
                .description("Requests refused because of a secret, by reason and secret name")
                .tag("reason", labels[0]).tag("secret", labels[1]).register(registry)).increment();
    }

    /** The protocols an exchange is counted under; anything else (never, today) counts as {@code other}. */
    private static final List<String> PROTOCOLS = List.of("http/1.1", "h2");

    private static String protocol(AuditFields f) {
        return f != null && f.protocol() != null && PROTOCOLS.contains(f.protocol()) ? f.protocol() : "other";
    }

    private Counter exchange(String protocol) {
        return exchanges.computeIfAbsent(protocol, p -> Counter.builder("sallyport.exchanges")
                .description("Exchanges (requests with their response) that finished, by the client's protocol")
                .tag("protocol", p).register(registry));
    }

    /** {@code sallyport_exchanges_total{protocol}} and the exchange's duration under the same protocol. */
    private void exchangeCompleted(AuditFields f) {
        String protocol = protocol(f);
        exchange(protocol).increment();
        if (f != null && f.durationMs() != null) {
            exchangeDurations.computeIfAbsent(protocol, p -> Timer.builder("sallyport.exchange.duration")
                    .description("Time from a request's head to the end of its response, by the client's protocol")
                    .tag("protocol", p).register(registry)).record(Duration.ofMillis(f.durationMs()));
        }
    }

    /** {@code sallyport_h2_streams_refused_total{reason}}: an HTTP/2 request the proxy refused before forwarding it. */
    private void h2Refusal(AuditFields f) {
        if (f == null || !"h2".equals(f.protocol()) || !"deny".equals(f.decision())) {
            return;
        }
        String reason = f.reason() == null ? "none" : f.reason();
        String label = h2Refusals.size() >= MAX_LABEL_SETS && !h2Refusals.containsKey(reason) ? "other" : reason;
        h2Refusals.computeIfAbsent(label, r -> Counter.builder("sallyport.h2.streams.refused")
                .description("HTTP/2 requests refused on their stream, by reason").tag("reason", r)
                .register(registry)).increment();
    }

    /** {@code sallyport_client_limit_refusals_total{limit}}: connections, tunnels, exchanges over a per-client limit. */
    private void clientLimitRefusal(AuditFields f) {
        if (f != null && "deny".equals(f.decision()) && f.reason() != null) {
            switch (f.reason()) {
                case ClientSlots.CONNECTION_LIMIT -> clientConnectionRefusals.increment();
                case ClientSlots.TUNNEL_LIMIT -> clientTunnelRefusals.increment();
                case ClientSlots.EXCHANGE_LIMIT -> clientExchangeRefusals.increment();
                default -> { }
            }
        }
    }

    private Counter clientLimit(String limit) {
        return Counter.builder("sallyport.client.limit.refusals")
                .description("Connections, tunnels and requests refused because their client held its per-client limit")
                .tag("limit", limit).register(registry);
    }

    private Counter bytes(String direction) {
        return Counter.builder("sallyport.bytes").description("Bytes relayed, up = client to upstream")
                .tag("direction", direction).register(registry);
    }

    private Counter reloads(String result) {
        return Counter.builder("sallyport.policy.reloads").description("Policy reloads by result")
                .tag("result", result).register(registry);
    }

    private static void record(Timer timer, Duration took) {
        if (took != null && !took.isNegative()) {
            timer.record(took);
        }
    }

    private static Duration ms(long millis) {
        return Duration.ofMillis(millis);
    }
}
