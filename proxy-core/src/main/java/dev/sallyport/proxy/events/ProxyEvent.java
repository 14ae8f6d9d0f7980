package dev.sallyport.proxy.events;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Something the proxy did that a security reviewer or a dashboard cares about. Fields are nullable where
 * docs/REFERENCE.md says "absent when not known"; {@link AuditFields} carries the shared ones.
 */
public sealed interface ProxyEvent {

    Instant ts();

    /** A decision that ends or opens an exchange: a CONNECT, or a request (allowed or refused). */
    record Decided(Instant ts, String event, AuditFields fields) implements ProxyEvent {}

    /** An HTTP exchange that finished (response sent or failed), with bytes and duration. */
    record ExchangeCompleted(Instant ts, AuditFields fields) implements ProxyEvent {}

    /** A CONNECT tunnel (intercepted or passthrough) or a WebSocket relay that closed. */
    record TunnelEnded(Instant ts, String event, AuditFields fields) implements ProxyEvent {}

    /**
     * A DNS question the proxy's stub answered (the name and type only, never other query content): {@code answer} is
     * the synthetic address given, or {@code NXDOMAIN}, {@code NODATA}, {@code REFUSED}; {@code suppressed} counts the
     * lookups before this one that the audit's rate limit left out (null when none); {@code identity} is who asked
     * ({@code anonymous}, or the registered sandbox whose relay carried the question).
     */
    record DnsAnswered(Instant ts, String client, String name, String type, String answer, String decision,
                       String rule, String reason, Long suppressed, String identity) implements ProxyEvent {}

    /**
     * A version of a package that a registry's rules filtered out of a package document or whose file they refused
     * ({@code ecosystem}, {@code packageName}, {@code version} and {@code reason} in {@code fields}): one per version
     * and request, with the request's id.
     */
    record VersionRefused(Instant ts, AuditFields fields) implements ProxyEvent {}

    /** A policy reload: result is "success" or "failure"; errors carry the lines of a broken file. */
    record Reloaded(Instant ts, String result, String source, List<String> errors) implements ProxyEvent {}

    /** Client connections and tunnels opening and closing, for the active gauges. */
    record ConnectionOpened(Instant ts) implements ProxyEvent {}
    record ConnectionClosed(Instant ts) implements ProxyEvent {}
    record TunnelOpened(Instant ts) implements ProxyEvent {}
    record TunnelClosed(Instant ts) implements ProxyEvent {}

    /** HTTP/2 streams of client connections opening (accepted by the codec) and closing, for the stream counts. */
    record StreamOpened(Instant ts) implements ProxyEvent {}
    record StreamClosed(Instant ts) implements ProxyEvent {}

    /** Certificate minting and cache use. */
    record CertMinted(Instant ts, String host, Duration took) implements ProxyEvent {}
    record CertCacheHit(Instant ts, String host) implements ProxyEvent {}

    /** An upstream TCP (and TLS, when intercepting) connection was established. */
    record UpstreamConnected(Instant ts, String host, Duration took) implements ProxyEvent {}

    /** A secret was injected into a request (name only, never the value). */
    record SecretInjected(Instant ts, String secret) implements ProxyEvent {}

    /**
     * A value a reload retired was dropped from scrubbing to keep the bound on retired values (name only): responses
     * are no longer scrubbed of it.
     */
    record RetiredValueDropped(Instant ts, String secret) implements ProxyEvent {}
}
