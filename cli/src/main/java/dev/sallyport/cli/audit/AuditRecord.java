package dev.sallyport.cli.audit;

import java.util.List;

/**
 * The fields of one audit line that the summary needs; null where the line does not carry them.
 *
 * @param forwarded the names in {@code placeholders_forwarded}: secrets whose placeholder went upstream unchanged
 * @param method    the request's method, null for a CONNECT
 * @param path      the request's path without query
 * @param identity  the client identity, where the proxy tells clients apart
 * @param tls       how a tunnel was handled ({@code intercepted}, {@code passthrough})
 * @param ecosystem a {@code registry} record's ecosystem ({@code npm}, {@code pypi}); with {@code packageName} and
 *                  {@code version}, the package version it refused
 * @param repository a git push's repository (a {@code request} record decided by a {@code git:} entry)
 * @param refsRefused the refs of that push its entry refused
 */
public record AuditRecord(String ts, String event, String host, Long port, Long status, String decision, String rule,
                          String reason, List<String> secrets, List<String> forwarded, String method, String path,
                          String identity, String tls, String ecosystem, String packageName, String version,
                          String repository, List<String> refsRefused) {

    /** A record that names no package version. */
    public AuditRecord(String ts, String event, String host, Long port, Long status, String decision, String rule,
                       String reason, List<String> secrets, List<String> forwarded, String method, String path,
                       String identity, String tls) {
        this(ts, event, host, port, status, decision, rule, reason, secrets, forwarded, method, path, identity, tls,
                null, null, null, null, null);
    }

    public AuditRecord {
        secrets = secrets == null ? List.of() : List.copyOf(secrets);
        forwarded = forwarded == null ? List.of() : List.copyOf(forwarded);
        refsRefused = refsRefused == null ? List.of() : List.copyOf(refsRefused);
    }

    /** {@code host:port}, or {@code (unknown)} for records without a host (reloads, for example). */
    public String destination() {
        if (host == null) {
            return "(unknown)";
        }
        String h = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
        return port == null ? h : h + ":" + port;
    }
}
