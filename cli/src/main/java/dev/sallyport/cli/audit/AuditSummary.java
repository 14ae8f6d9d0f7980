package dev.sallyport.cli.audit;

import java.io.PrintWriter;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Counts what a security reviewer asks first: which hosts were reached, what was denied (and why), which
 * secrets were used where, and how often each rule decided.
 *
 * <p>It counts decisions and exchanges, not lines. The proxy writes up to two {@code request} records per exchange
 * (proxy-core's OBSERVABILITY.md): the decision it admits before the request goes upstream, without {@code status},
 * and the exchange's outcome, with {@code status} (a request refused at once has only that one). So an exchange is
 * its {@code request} record with a status, and its secrets are that record's. A {@code connect} is one decision (a
 * tunnel, counted apart from the exchanges inside it); {@code tunnel_end} and {@code websocket_end} end what was
 * counted already; a refused WebSocket message ({@code websocket_message}) is one denied attempt.
 */
public final class AuditSummary {

    private long records;
    private long checkpoints;
    private long exchanges;
    private long tunnels;
    private String first;
    private String last;
    private final Map<String, Long> reached = new TreeMap<>();
    private final Map<String, Long> denied = new TreeMap<>();
    private final Map<String, Long> wouldDeny = new TreeMap<>();
    private final Map<String, Map<String, Long>> secrets = new TreeMap<>();
    private final Map<String, Map<String, Long>> forwarded = new TreeMap<>();
    private final Map<String, Map<String, Long>> rules = new TreeMap<>();
    private long reloads;
    private final Map<String, Map<String, Long>> deniedByReason = new TreeMap<>();
    private final Map<String, Map<String, Long>> wouldDenyByReason = new TreeMap<>();
    /** {@code ecosystem package@version} to reason to how many requests refused it or filtered it out. */
    private final Map<String, Map<String, Long>> versions = new TreeMap<>();
    /** {@code host/repository} to refused ref (and reason) to how many pushes it was refused in. */
    private final Map<String, Map<String, Long>> pushes = new TreeMap<>();

    public void add(AuditRecord r) {
        if ("checkpoint".equals(r.event())) {
            checkpoints++;
            return;     // the chain's signature (audit verify checks it), not an audit record
        }
        records++;
        if (r.ts() != null) {
            first = first == null ? r.ts() : first;
            last = r.ts();
        }
        String event = r.event() == null ? "" : r.event();
        switch (event) {
            case "reload" -> {
                reloads++;
                return;
            }
            case "tunnel_end", "websocket_end" -> {
                return;     // the end of a tunnel or WebSocket whose decision was counted when it opened
            }
            case "request" -> {
                if (r.status() == null) {
                    return;     // the decision admitted before sending: the exchange's outcome record follows
                }
                exchanges++;
                if (r.repository() != null && "deny".equals(r.decision())) {
                    String where = (r.host() == null ? "" : r.host() + "/") + r.repository();
                    String reason = r.reason() == null ? "no reason recorded" : r.reason();
                    for (String ref : r.refsRefused().isEmpty() ? List.of("(discovery)") : r.refsRefused()) {
                        pushes.computeIfAbsent(where, k -> new TreeMap<>()).merge(ref + " (" + reason + ")", 1L,
                                Long::sum);
                    }
                }
            }
            case "connect" -> tunnels += "deny".equals(r.decision()) ? 0 : 1;
            case "registry" -> {
                // a version a registry's rules kept from a document or refused as a file: its request is counted
                String what = r.ecosystem() + " " + r.packageName() + (r.version() == null ? "" : "@" + r.version());
                versions.computeIfAbsent(what, k -> new TreeMap<>())
                        .merge(r.reason() == null ? "no reason recorded" : r.reason(), 1L, Long::sum);
                return;
            }
            case "dns" -> {
                if (!"deny".equals(r.decision())) {
                    return;     // an answered lookup reached nothing: the connection that follows is counted
                }
            }
            default -> { }
        }
        if (r.decision() == null) {
            return;
        }
        String decision = r.decision();
        String rule = r.rule() == null ? "(none)" : r.rule();
        rules.computeIfAbsent(rule, k -> new TreeMap<>()).merge(decision, 1L, Long::sum);
        switch (decision) {
            case "deny" -> {
                denied.merge(r.destination() + "  " + reasonOf(r), 1L, Long::sum);
                deniedByReason.computeIfAbsent(reasonOf(r), k -> new TreeMap<>()).merge(r.destination(), 1L, Long::sum);
            }
            case "would_deny" -> {
                wouldDeny.merge(r.destination() + "  " + reasonOf(r), 1L, Long::sum);
                wouldDenyByReason.computeIfAbsent(reasonOf(r), k -> new TreeMap<>()).merge(r.destination(), 1L,
                        Long::sum);
            }
            default -> {
                if ("request".equals(event)) {
                    reached.merge(r.destination(), 1L, Long::sum);
                }
            }
        }
        if (!"deny".equals(decision)) {     // a refusal names the secret it refused: that is no use (see denied)
            countOncePerName(secrets, r.secrets(), r.destination());
        }
        countOncePerName(forwarded, r.forwarded(), r.destination());
    }

    private static void countOncePerName(Map<String, Map<String, Long>> into, Iterable<String> names, String where) {
        Set<String> once = new LinkedHashSet<>();
        names.forEach(once::add);
        for (String s : once) {
            into.computeIfAbsent(s, k -> new TreeMap<>()).merge(where, 1L, Long::sum);
        }
    }

    /** {@code (reason)}, or {@code (reason: SECRET)} when the refusal names a secret. */
    private static String reasonOf(AuditRecord r) {
        String reason = r.reason() == null ? "no reason recorded" : r.reason();
        return "(" + reason + (r.secrets().isEmpty() ? "" : ": " + String.join(", ", r.secrets())) + ")";
    }

    /** The figures the summary prints, for the report (the same counts, so that the two always agree). */
    public record Figures(long records, long exchanges, long tunnels, String first, String last,
                          Map<String, Long> reached, Map<String, Map<String, Long>> deniedByReason,
                          Map<String, Map<String, Long>> wouldDenyByReason, Map<String, Map<String, Long>> secrets,
                          Map<String, Map<String, Long>> rules, long checkpoints) {}

    public Figures figures() {
        return new Figures(records, exchanges, tunnels, first, last, reached, deniedByReason, wouldDenyByReason,
                secrets, rules, checkpoints);
    }

    public void print(PrintWriter out, String source) {
        out.printf("%s: %s, %s, %s%s%n", source, count(records, "record"), count(exchanges, "exchange"),
                count(tunnels, "tunnel"), first == null ? "" : ", " + first + " .. " + last);
        if (checkpoints > 0) {
            out.printf("signed checkpoints: %d ('sallyport audit verify' checks them)%n", checkpoints);
        }
        section(out, "hosts reached (allowed exchanges)", reached);
        section(out, "denied attempts", denied);
        if (!wouldDeny.isEmpty()) {
            section(out, "would be denied (audit mode)", wouldDeny);
        }
        if (!versions.isEmpty()) {
            out.println("package versions refused (registries; requests per reason):");
            versions.forEach((what, reasons) -> out.printf("  %-32s %s%n", what, joined(reasons)));
        }
        if (!pushes.isEmpty()) {
            out.println("git pushes refused (per repository, refused refs and the first reason):");
            pushes.forEach((where, refs) -> out.printf("  %-32s %s%n", where, joined(refs)));
        }
        out.println("secrets used (by name, exchanges per host):");
        if (secrets.isEmpty()) {
            out.println("  (none)");
        }
        secrets.forEach((name, hosts) -> out.printf("  %-24s %s%n", name, joined(hosts)));
        if (!forwarded.isEmpty()) {
            out.println("placeholders forwarded unchanged (outside the listed headers, on their own hosts):");
            forwarded.forEach((name, hosts) -> out.printf("  %-24s %s%n", name, joined(hosts)));
        }
        out.println("per rule (decisions):");
        if (rules.isEmpty()) {
            out.println("  (none)");
        }
        rules.forEach((rule, counts) -> out.printf("  %-24s %s%n", rule, joined(counts)));
        if (reloads > 0) {
            out.printf("policy reloads: %d%n", reloads);
        }
    }

    private static String count(long n, String noun) {
        return n + " " + noun + (n == 1 ? "" : "s");
    }

    private static void section(PrintWriter out, String title, Map<String, Long> counts) {
        out.println(title + ":");
        if (counts.isEmpty()) {
            out.println("  (none)");
            return;
        }
        var byCount = new TreeSet<Map.Entry<String, Long>>(
                Comparator.<Map.Entry<String, Long>>comparingLong(Map.Entry::getValue).reversed()
                        .thenComparing(Map.Entry::getKey));
        byCount.addAll(counts.entrySet());
        byCount.forEach(e -> out.printf("  %6d  %s%n", e.getValue(), e.getKey()));
    }

    private static String joined(Map<String, Long> counts) {
        StringBuilder sb = new StringBuilder();
        counts.forEach((k, v) -> sb.append(sb.isEmpty() ? "" : ", ").append(k).append(' ').append(v));
        return sb.toString();
    }
}
