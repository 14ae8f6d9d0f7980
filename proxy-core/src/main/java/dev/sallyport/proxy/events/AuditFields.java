package dev.sallyport.proxy.events;

import java.util.List;

/**
 * The fields of one audit record (docs/REFERENCE.md), null where not known. Never holds a query string, a header
 * value or a secret value: {@code path} is the path without query, {@code secrets} holds names.
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
        String protocol) {

    public AuditFields {
        secrets = secrets == null ? null : List.copyOf(secrets);
    }

    /** Fields without the client's protocol (a tunnel's, or a record read back from an older log). */
    public AuditFields(String id, String client, String identity, String host, Integer port, String ip, String method,
                       String path, Integer status, String decision, String rule, String reason, String tls, String sni,
                       Long bytesUp, Long bytesDown, Long durationMs, List<String> secrets) {
        this(id, client, identity, host, port, ip, method, path, status, decision, rule, reason, tls, sni, bytesUp,
                bytesDown, durationMs, secrets, null);
    }
}
