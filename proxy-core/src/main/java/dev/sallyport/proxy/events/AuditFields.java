package dev.sallyport.proxy.events;

import java.util.List;

/**
 * The fields of one audit record (docs/REFERENCE.md), null where not known. Never holds a query string, a header
 * value or a secret value: {@code path} is the path without query, {@code secrets} holds names (injected, or the
 * one a refusal names), {@code placeholdersForwarded} the names of secrets whose placeholder went upstream
 * unchanged (on their own hosts, outside the listed headers), {@code protocol} the client's ({@code http/1.1},
 * {@code h2}); {@code repository}, {@code refs} and {@code refsRefused} say what a git push asked for (the refs its
 * commands update, and those refused).
 */
public record AuditFields(
        String id,
        String client,
        String identity,
        String host,
        Integer port,
        String ip,
        String method,
        String path,
        Integer status,
        String decision,
        String rule,
        String reason,
        String tls,
        String sni,
        Long bytesUp,
        Long bytesDown,
        Long durationMs,
        List<String> secrets,
        List<String> placeholdersForwarded,
        String protocol,
        String upstreamProtocol,
        String arrival,
        String ecosystem,
        String packageName,
        String version,
        String repository,
        List<String> refs,
        List<String> refsRefused) {

    public AuditFields {
        secrets = secrets == null ? null : List.copyOf(secrets);
        placeholdersForwarded = placeholdersForwarded == null ? null : List.copyOf(placeholdersForwarded);
        refs = refs == null ? null : List.copyOf(refs);
        refsRefused = refsRefused == null ? null : List.copyOf(refsRefused);
    }

    /** A record that names no git push (every record but a push's). */
    public AuditFields(String id, String client, String identity, String host, Integer port, String ip, String method,
                       String path, Integer status, String decision, String rule, String reason, String tls,
                       String sni, Long bytesUp, Long bytesDown, Long durationMs, List<String> secrets,
                       List<String> placeholdersForwarded, String protocol, String upstreamProtocol, String arrival,
                       String ecosystem, String packageName, String version) {
        this(id, client, identity, host, port, ip, method, path, status, decision, rule, reason, tls, sni, bytesUp,
                bytesDown, durationMs, secrets, placeholdersForwarded, protocol, upstreamProtocol, arrival, ecosystem,
                packageName, version, null, null, null);
    }

    /** A record that names no package (every record but a registry's). */
    public AuditFields(String id, String client, String identity, String host, Integer port, String ip, String method,
                       String path, Integer status, String decision, String rule, String reason, String tls,
                       String sni, Long bytesUp, Long bytesDown, Long durationMs, List<String> secrets,
                       List<String> placeholdersForwarded, String protocol, String upstreamProtocol, String arrival) {
        this(id, client, identity, host, port, ip, method, path, status, decision, rule, reason, tls, sni, bytesUp,
                bytesDown, durationMs, secrets, placeholdersForwarded, protocol, upstreamProtocol, arrival, null, null,
                null);
    }

    /** A record that says neither the upstream protocol nor how its client arrived. */
    public AuditFields(String id, String client, String identity, String host, Integer port, String ip, String method,
                       String path, Integer status, String decision, String rule, String reason, String tls,
                       String sni, Long bytesUp, Long bytesDown, Long durationMs, List<String> secrets,
                       List<String> placeholdersForwarded, String protocol) {
        this(id, client, identity, host, port, ip, method, path, status, decision, rule, reason, tls, sni, bytesUp,
                bytesDown, durationMs, secrets, placeholdersForwarded, protocol, null, null);
    }

    /** A record with no placeholder forwarded and no client protocol (a tunnel's, or one read back). */
    public AuditFields(String id, String client, String identity, String host, Integer port, String ip, String method,
                       String path, Integer status, String decision, String rule, String reason, String tls,
                       String sni, Long bytesUp, Long bytesDown, Long durationMs, List<String> secrets) {
        this(id, client, identity, host, port, ip, method, path, status, decision, rule, reason, tls, sni, bytesUp,
                bytesDown, durationMs, secrets, null, null, null, null);
    }
}
