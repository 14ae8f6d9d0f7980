package dev.sallyport.proxy.audit;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.events.ProxyEvent;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Optional;

/**
 * Turns a {@link ProxyEvent} into its audit line (docs/REFERENCE.md, "The audit record"), or nothing for the
 * gauge-only events (connections and tunnels opening, certificates, upstream connects, injections): those
 * feed metrics, and the decision and exchange records already carry what an auditor needs.
 */
final class AuditRecords {

    private static final DateTimeFormatter SECONDS =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss").withZone(ZoneOffset.UTC);

    /** The formatted second last used: records arrive in bursts within one second. */
    private record Second(long epochSecond, String text) {}

    private static volatile Second lastSecond = new Second(Long.MIN_VALUE, "");

    private AuditRecords() {}

    /** The line (ending in a line feed) for this event, or empty when the event is not an audit record. */
    static Optional<String> encode(ProxyEvent event, Instant fallbackTs) {
        return write(event, fallbackTs, new Batch(512)).map(JsonLine::end);
    }

    /**
     * Writes the event's record into out, its closing brace and line feed left to the caller (the chain ends the
     * line, {@link AuditChain#link}); empty, with nothing written, when the event is not an audit record.
     */
    static Optional<JsonLine> write(ProxyEvent event, Instant fallbackTs, Batch out) {
        Instant ts = event.ts() == null ? fallbackTs : event.ts();
        return switch (event) {
            case ProxyEvent.Decided d -> Optional.of(record(out, ts, nonBlank(d.event(), "decision"), d.fields()));
            case ProxyEvent.ExchangeCompleted e -> Optional.of(record(out, ts, "request", e.fields()));
            case ProxyEvent.VersionRefused v -> Optional.of(record(out, ts, "registry", v.fields()));
            case ProxyEvent.TunnelEnded t -> Optional.of(record(out, ts, nonBlank(t.event(), "tunnel_end"), t.fields()));
            case ProxyEvent.Reloaded r -> Optional.of(new JsonLine(out)
                    .field("ts", timestamp(ts))
                    .field("event", "reload")
                    .field("result", r.result())
                    .field("source", r.source())
                    .field("errors", r.errors()));
            case ProxyEvent.DnsAnswered d -> Optional.of(new JsonLine(out)
                    .field("ts", timestamp(ts))
                    .field("event", "dns")
                    .field("client", d.client())
                    .field("identity", d.identity())
                    .field("host", d.name())
                    .field("qtype", d.type())
                    .field("answer", d.answer())
                    .field("decision", d.decision())
                    .field("rule", d.rule())
                    .field("reason", d.reason())
                    .field("suppressed", d.suppressed())
                    .field("arrival", d.name() == null ? null : "transparent"));
            case ProxyEvent.ConnectionOpened ignored -> Optional.empty();
            case ProxyEvent.ConnectionClosed ignored -> Optional.empty();
            case ProxyEvent.TunnelOpened ignored -> Optional.empty();
            case ProxyEvent.TunnelClosed ignored -> Optional.empty();
            case ProxyEvent.StreamOpened ignored -> Optional.empty();
            case ProxyEvent.StreamClosed ignored -> Optional.empty();
            case ProxyEvent.CertMinted ignored -> Optional.empty();
            case ProxyEvent.CertCacheHit ignored -> Optional.empty();
            case ProxyEvent.UpstreamConnected ignored -> Optional.empty();
            case ProxyEvent.SecretInjected ignored -> Optional.empty();
            case ProxyEvent.RetiredValueDropped ignored -> Optional.empty();
        };
    }

    /** Whether the event becomes an audit line (the others only feed metrics). */
    static boolean isRecord(ProxyEvent event) {
        return event instanceof ProxyEvent.Decided || event instanceof ProxyEvent.ExchangeCompleted
                || event instanceof ProxyEvent.TunnelEnded || event instanceof ProxyEvent.Reloaded
                || event instanceof ProxyEvent.DnsAnswered || event instanceof ProxyEvent.VersionRefused;
    }

    /**
     * Whether the record ends an exchange, tunnel or WebSocket: it follows an admitted decision (or, at most one per
     * connection, one refused when admission stopped), so its number is bounded by the open connections.
     */
    static boolean endsAdmitted(ProxyEvent event) {
        return event instanceof ProxyEvent.ExchangeCompleted || event instanceof ProxyEvent.TunnelEnded;
    }

    /** RFC 3339 in UTC with milliseconds, truncated: {@code 2026-11-30T01:02:03.456Z}. */
    static String timestamp(Instant ts) {
        Second second = lastSecond;
        if (second.epochSecond() != ts.getEpochSecond()) {
            second = new Second(ts.getEpochSecond(), SECONDS.format(ts.truncatedTo(ChronoUnit.SECONDS)));
            lastSecond = second;
        }
        int millis = ts.getNano() / 1_000_000;
        char[] ms = {'.', (char) ('0' + millis / 100), (char) ('0' + millis / 10 % 10), (char) ('0' + millis % 10), 'Z'};
        return second.text().concat(new String(ms));
    }

    /** The path without query or fragment, whatever the caller passed. */
    static String pathWithoutQuery(String path) {
        if (path == null) {
            return null;
        }
        int cut = path.length();
        int q = path.indexOf('?');
        int h = path.indexOf('#');
        if (q >= 0) {
            cut = q;
        }
        if (h >= 0 && h < cut) {
            cut = h;
        }
        return path.substring(0, cut);
    }

    private static JsonLine record(Batch out, Instant ts, String event, AuditFields f) {
        JsonLine line = new JsonLine(out).field("ts", timestamp(ts)).field("event", event);
        if (f == null) {
            return line;
        }
        return line.field("id", f.id())
                .field("client", f.client())
                .field("identity", f.identity())
                .field("host", f.host())
                .field("port", f.port())
                .field("ip", f.ip())
                .field("method", f.method())
                .field("path", pathWithoutQuery(f.path()))
                .field("status", f.status())
                .field("decision", f.decision())
                .field("rule", f.rule())
                .field("reason", f.reason())
                .field("tls", f.tls())
                .field("sni", f.sni())
                .field("protocol", f.protocol())
                .field("upstream_protocol", f.upstreamProtocol())
                .field("arrival", f.arrival())
                .field("bytes_up", f.bytesUp())
                .field("bytes_down", f.bytesDown())
                .field("duration_ms", f.durationMs())
                .field("secrets", f.secrets())
                .field("placeholders_forwarded", f.placeholdersForwarded())
                .field("ecosystem", f.ecosystem())
                .field("package", f.packageName())
                .field("version", f.version())
                .field("repository", f.repository())
                .field("refs", f.refs())
                .field("refs_refused", f.refsRefused());
    }

    private static String nonBlank(String s, String fallback) {
        return s == null || s.isBlank() ? fallback : s;
    }
}
