package dev.sallyport.cli.audit;

import java.io.PrintWriter;
import java.util.Comparator;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import dev.sallyport.policy.Decision;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.policy.Reasons;
import dev.sallyport.policy.Verdict;

/**
 * Decides every recorded decision again under a candidate policy and counts what would change: a tunnel
 * ({@code connect}) or an exchange (the {@code request} record with a status, one per request) that went through and
 * would be refused ("newly denied"), one refused that would go through ("newly allowed"), or one that a rule decided
 * and another rule would ("different rule"). Going through is {@code allow} or {@code would_deny} (audit mode), on
 * both sides: a log recorded in audit mode replayed against a policy that allows what it shows changes nothing, and
 * its {@code would_deny} decisions that a rule now allows are counted apart. Records refused for reasons outside the
 * rules (a secret in clear, a private address, limits) are not replayed, and counted apart.
 */
public final class Replay {

    /** The reasons that come from the rules (and request validity), so that replaying them is meaningful. */
    private static final Set<String> RULE_REASONS = Set.of(Reasons.ALLOWED, Reasons.DENIED, Reasons.NO_MATCHING_RULE,
            Reasons.METHOD_NOT_ALLOWED, Reasons.PATH_NOT_ALLOWED, Reasons.PORT_NOT_ALLOWED, Reasons.CLIENT_NOT_ALLOWED,
            Reasons.INVALID_HOST, Reasons.INVALID_PATH, Reasons.INVALID_METHOD, Reasons.INVALID_PORT,
            Reasons.INVALID_URL);

    private final PolicyEngine engine;
    private long replayed;
    private long unchanged;
    private long nowAllowedByRule;
    private final Map<String, Long> outside = new TreeMap<>();
    private final Map<String, Map<String, Long>> changes = new TreeMap<>();

    public Replay(PolicyEngine engine) {
        this.engine = engine;
    }

    public void add(AuditRecord r) {
        String event = r.event() == null ? "" : r.event();
        boolean connect = event.equals("connect");
        if (!(connect || (event.equals("request") && r.status() != null)) || r.decision() == null || r.host() == null
                || r.port() == null) {
            return;
        }
        if (r.decision().equals("deny") && !RULE_REASONS.contains(String.valueOf(r.reason()))) {
            outside.merge(String.valueOf(r.reason()), 1L, Long::sum);
            return;
        }
        replayed++;
        int port = r.port().intValue();
        Decision now = connect ? engine.onConnect(r.host(), port, r.identity())
                : engine.onRequest(r.host(), port, r.method() == null ? "GET" : r.method(),
                        r.path() == null ? "/" : r.path(), r.identity());
        boolean wasThrough = !r.decision().equals("deny");
        boolean isThrough = now.permitsTraffic();
        String what = (connect ? "CONNECT " + r.destination() : r.method() + " " + r.destination() + " " + r.path());
        String group;
        if (wasThrough && !isThrough) {
            group = "newly denied";
        } else if (!wasThrough && isThrough) {
            group = "newly allowed";
        } else if (r.rule() != null && now.rule() != null && !r.rule().equals(now.rule())) {
            group = "different rule";
        } else {
            unchanged++;
            if (r.decision().equals("would_deny") && now.verdict() == Verdict.ALLOW) {
                nowAllowedByRule++;
            }
            return;
        }
        changes.computeIfAbsent(group, g -> new TreeMap<>())
                .merge(what + "  (" + said(r.decision(), r.rule(), r.reason()) + " -> "
                        + said(now.verdict().code(), now.rule(), now.reason()) + ")", 1L, Long::sum);
    }

    /** Whether anything would change. */
    public boolean changed() {
        return !changes.isEmpty();
    }

    public void print(PrintWriter out, String policy) {
        long changed = replayed - unchanged;
        out.printf("%s (mode %s) against %d recorded decisions: %d would change, %d unchanged%n", policy,
                engine.policy().mode().name().toLowerCase(java.util.Locale.ROOT), replayed, changed, unchanged);
        for (String group : new String[] {"newly denied", "newly allowed", "different rule"}) {
            Map<String, Long> counts = changes.getOrDefault(group, Map.of());
            out.printf("%s: %d%n", group, counts.values().stream().mapToLong(Long::longValue).sum());
            counts.entrySet().stream()
                    .sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder())
                            .thenComparing(Map.Entry.comparingByKey()))
                    .forEach(e -> out.printf("  %6d  %s%n", e.getValue(), e.getKey()));
        }
        if (nowAllowedByRule > 0) {
            out.printf("would_deny (audit mode) now allowed by a rule: %d (no change in what goes through)%n",
                    nowAllowedByRule);
        }
        if (!outside.isEmpty()) {
            out.printf("not replayed (refused outside the rules): %s%n", outside);
        }
    }

    private static String said(String verdict, String rule, String reason) {
        return verdict + (rule == null ? "" : " by " + rule) + (reason == null ? "" : ": " + reason);
    }
}
