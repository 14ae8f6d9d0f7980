package dev.sallyport.cli.audit;

import java.util.List;

/** The fields of one audit line that the summary needs; null where the line does not carry them. */
public record AuditRecord(String ts, String event, String host, Long port, String decision, String rule,
                          String reason, List<String> secrets) {

    public AuditRecord {
        secrets = secrets == null ? List.of() : List.copyOf(secrets);
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
