package dev.sallyport.cli.audit;

import java.io.PrintWriter;
import java.util.Comparator;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Counts what a security reviewer asks first: which hosts were reached, what was denied (and why), which
 * secrets were used where, and how often each rule decided.
 */
public final class AuditSummary {

    private long records;
    private String first;
    private String last;
    private final Map<String, Long> reached = new TreeMap<>();
    private final Map<String, Long> denied = new TreeMap<>();
    private final Map<String, Long> wouldDeny = new TreeMap<>();
    private final Map<String, Map<String, Long>> secrets = new TreeMap<>();
    private final Map<String, Map<String, Long>> rules = new TreeMap<>();
    private long reloads;

    public void add(AuditRecord r) {
        records++;
        if (r.ts() != null) {
            first = first == null ? r.ts() : first;
            last = r.ts();
        }
        if ("reload".equals(r.event())) {
            reloads++;
            return;
        }
        if (r.decision() == null) {
            return;
        }
        String decision = r.decision();
        String rule = r.rule() == null ? "(none)" : r.rule();
        rules.computeIfAbsent(rule, k -> new TreeMap<>()).merge(decision, 1L, Long::sum);
        switch (decision) {
            case "deny" -> denied.merge(r.destination() + "  " + reasonOf(r), 1L, Long::sum);
            case "would_deny" -> wouldDeny.merge(r.destination() + "  " + reasonOf(r), 1L, Long::sum);
            default -> {
                if (!"connect".equals(r.event())) {
                    reached.merge(r.destination(), 1L, Long::sum);
                }
            }
        }
        for (String s : r.secrets()) {
            secrets.computeIfAbsent(s, k -> new TreeMap<>()).merge(r.destination(), 1L, Long::sum);
        }
    }

    private static String reasonOf(AuditRecord r) {
        return "(" + (r.reason() == null ? "no reason recorded" : r.reason()) + ")";
    }

    public void print(PrintWriter out, String source) {
        out.printf("%s: %d records%s%n", source, records,
                first == null ? "" : ", " + first + " .. " + last);
        section(out, "hosts reached (allowed exchanges)", reached);
        section(out, "denied attempts", denied);
        if (!wouldDeny.isEmpty()) {
            section(out, "would be denied (audit mode)", wouldDeny);
        }
        out.println("secrets used (by name):");
        if (secrets.isEmpty()) {
            out.println("  (none)");
        }
        secrets.forEach((name, hosts) -> out.printf("  %-24s %s%n", name, joined(hosts)));
        out.println("per rule:");
        if (rules.isEmpty()) {
            out.println("  (none)");
        }
        rules.forEach((rule, counts) -> out.printf("  %-24s %s%n", rule, joined(counts)));
        if (reloads > 0) {
            out.printf("policy reloads: %d%n", reloads);
        }
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
