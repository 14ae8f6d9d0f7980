package dev.sallyport.cli.audit;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

import dev.sallyport.policy.IpAddress;
import dev.sallyport.policy.PathPattern;

/**
 * A first policy learnt from audit logs: the tunnels and exchanges the log shows allowed or, in {@code mode: audit},
 * {@code would_deny}, as allow rules, and nothing else (what was denied stays denied: no rule matches it). Per host
 * and port, each method's paths are collapsed to {@code prefix/**} where they part into {@value #COLLAPSE_AT} or more
 * branches below a prefix of at least one segment, unless a path the log shows refused is under it; methods with the same paths share a rule, and hosts with the same rules share
 * them. IP literals become {@code cidrs} of one address. Wildcards are only suggested, in a comment, when
 * {@value #WILDCARD_AT} or more hosts of one rule share a parent domain of three labels or more; the secrets whose placeholders requests carried are
 * named in a comment, with their hosts, as the policy's {@code secrets} section needs defining by hand.
 */
public final class Suggestion {

    /** Distinct paths below one prefix from which the prefix is allowed as a whole. */
    static final int COLLAPSE_AT = 3;
    /** Subdomains of one parent from which a wildcard is suggested. */
    static final int WILDCARD_AT = 3;

    /** Host and port of a destination. */
    private record Target(String host, long port) implements Comparable<Target> {
        @Override
        public int compareTo(Target o) {
            int c = host.compareTo(o.host);
            return c != 0 ? c : Long.compare(port, o.port);
        }
    }

    /** What the log shows for one destination: the paths of each method, whether a tunnel went through unseen. */
    private static final class Seen {
        final Map<String, SortedSet<String>> paths = new TreeMap<>();
        /** Paths the log shows refused: no prefix that covers one of them is collapsed. */
        final Set<String> denied = new TreeSet<>();
        boolean passthrough;
        long count;
    }

    private final Map<Target, Seen> seen = new TreeMap<>();
    private final Map<String, SortedSet<String>> secrets = new TreeMap<>();
    private final List<String> unusable = new ArrayList<>();
    private long learnt;
    private long skipped;
    private String first;
    private String last;

    public void add(AuditRecord r) {
        String event = r.event() == null ? "" : r.event();
        boolean connect = event.equals("connect");
        boolean exchange = event.equals("request") && r.status() != null;
        if ((!connect && !exchange) || r.host() == null || r.port() == null) {
            return;
        }
        if (!"allow".equals(r.decision()) && !"would_deny".equals(r.decision())) {
            skipped++;
            if (exchange && r.path() != null) {
                seen.computeIfAbsent(new Target(r.host().toLowerCase(Locale.ROOT), r.port()), t -> new Seen())
                        .denied.add(r.path());
            }
            return;
        }
        learnt++;
        if (r.ts() != null) {
            first = first == null ? r.ts() : first;
            last = r.ts();
        }
        Seen s = seen.computeIfAbsent(new Target(r.host().toLowerCase(Locale.ROOT), r.port()), t -> new Seen());
        s.count++;
        if (connect) {
            s.passthrough |= "passthrough".equals(r.tls());
            return;
        }
        String method = r.method() == null ? "GET" : r.method();
        s.paths.computeIfAbsent(method, m -> new TreeSet<>()).add(r.path() == null || r.path().isEmpty() ? "/" : r.path());
        for (String name : r.secrets()) {
            secrets.computeIfAbsent(name, n -> new TreeSet<>()).add(r.destination());
        }
    }

    /** One rule to be: where, how reached, and which methods on which paths (empty: a tunnel without requests). */
    private record Entry(boolean passthrough, List<String> methods, List<String> paths) {}

    /** The rules of hosts on one port that the log shows used alike. */
    private record Shape(long port, List<Entry> entries) {}

    public void print(PrintWriter out, List<String> sources) {
        out.println("# A policy suggested by 'sallyport policy suggest' from " + String.join(", ", sources));
        out.println("# " + learnt + " allowed (or audit-mode would_deny) decisions"
                + (first == null ? "" : ", " + first + " .. " + last) + "; " + skipped
                + " denied, left denied.");
        out.println("# It allows only what the log shows. Review every rule: a collapsed prefix (/**) allows paths");
        out.println("# below it the log did not show. Then 'sallyport policy replay' it against the log.");
        out.println("mode: enforce");
        Map<Shape, List<Target>> byShape = new LinkedHashMap<>();
        seen.forEach((target, s) -> {
            if (s.count > 0) {
                byShape.computeIfAbsent(new Shape(target.port(), entries(s)), e -> new ArrayList<>()).add(target);
            }
        });
        if (byShape.isEmpty()) {
            out.println("rules: []   # the log shows nothing allowed");
        } else {
            out.println("rules:");
        }
        Set<String> names = new TreeSet<>();
        byShape.forEach((shape, targets) -> {
            List<Entry> entries = shape.entries();
            List<String> hosts = targets.stream().map(Target::host).filter(h -> !isIp(h)).distinct().toList();
            List<String> cidrs = targets.stream().map(Target::host).filter(Suggestion::isIp).distinct()
                    .map(h -> h.indexOf(':') >= 0 ? h + "/128" : h + "/32").toList();
            long count = targets.stream().mapToLong(t -> seen.get(t).count).sum();
            for (int i = 0; i < entries.size(); i++) {
                Entry e = entries.get(i);
                String name = unique(names, nameFor(targets.getFirst().host()) + (entries.size() > 1 ? "-" + (i + 1) : ""));
                out.printf("  - name: %s%s%n", name, i == 0 ? "   # " + count + " decisions" : "");
                if (!hosts.isEmpty()) {
                    out.printf("    hosts: [%s]%n", String.join(", ", hosts.stream().map(Suggestion::quoted).toList()));
                    if (i == 0) {
                        wildcards(out, hosts);
                    }
                }
                if (!cidrs.isEmpty()) {
                    out.printf("    cidrs: [%s]%n", String.join(", ", cidrs.stream().map(Suggestion::quoted).toList()));
                }
                out.printf("    ports: [%d]%n", shape.port());
                if (e.passthrough()) {
                    out.println("    tls: passthrough   # tunnels the proxy did not intercept: no requests seen inside");
                }
                if (!e.methods().isEmpty()) {
                    out.printf("    methods: [%s]%n", String.join(", ", e.methods()));
                    out.printf("    paths: [%s]%n", String.join(", ", e.paths().stream().map(Suggestion::quoted).toList()));
                }
            }
        });
        for (String u : unusable) {
            out.println("# Left out, not a valid path pattern: " + u);
        }
        if (!secrets.isEmpty()) {
            out.println("# Secrets whose placeholders requests carried (define each under secrets:, with from: and");
            out.println("# headers:, before using this policy):");
            secrets.forEach((name, where) -> out.printf("#   %s on %s%n", name, String.join(", ", where)));
        }
    }

    private List<Entry> entries(Seen s) {
        if (s.paths.isEmpty()) {
            return List.of(new Entry(s.passthrough, List.of(), List.of()));
        }
        Map<List<String>, List<String>> methodsByPaths = new LinkedHashMap<>();
        s.paths.forEach((method, paths) ->
                methodsByPaths.computeIfAbsent(collapse(paths, s.denied), p -> new ArrayList<>()).add(method));
        List<Entry> out = new ArrayList<>();
        methodsByPaths.forEach((paths, methods) -> out.add(new Entry(false, methods, paths)));
        return out;
    }

    /** The paths, with those sharing a prefix of one segment or more, COLLAPSE_AT or more of them, as prefix/**. */
    private List<String> collapse(SortedSet<String> paths, Set<String> denied) {
        List<String> out = new ArrayList<>();
        collapse(new ArrayList<>(paths), 1, denied, out);
        List<String> valid = new ArrayList<>();
        for (String p : out) {
            try {
                PathPattern.parse(p);
                valid.add(p);
            } catch (IllegalArgumentException e) {
                unusable.add(p + ": " + e.getMessage());
            }
        }
        return valid;
    }

    private static void collapse(List<String> paths, int depth, Set<String> denied, List<String> out) {
        Map<String, List<String>> byPrefix = new TreeMap<>();
        for (String p : paths) {
            String[] segments = p.substring(1).split("/", -1);
            String prefix = segments.length <= depth ? p : "/" + String.join("/", Arrays.copyOf(segments, depth));
            byPrefix.computeIfAbsent(prefix, k -> new ArrayList<>()).add(p);
        }
        byPrefix.forEach((prefix, under) -> {
            if (under.size() == 1) {
                out.add(under.getFirst());
                return;
            }
            List<String> deeper = under.stream().filter(p -> !p.equals(prefix)).toList();
            long branches = deeper.stream().map(p -> p.substring(1).split("/", -1)[depth]).distinct().count();
            if (branches >= COLLAPSE_AT && denied.stream().noneMatch(d -> d.equals(prefix) || d.startsWith(prefix + "/"))) {
                out.add(prefix + "/**");     // many paths part here: the prefix as a whole
                return;
            }
            if (deeper.size() < under.size()) {
                out.add(prefix);
            }
            collapse(deeper, depth + 1, denied, out);
        });
    }

    /** A wildcard, in a comment, for WILDCARD_AT or more of a rule's hosts under one parent of 3 labels or more. */
    private static void wildcards(PrintWriter out, List<String> hosts) {
        Map<String, List<String>> byParent = new TreeMap<>();
        for (String h : hosts) {
            int dot = h.indexOf('.');
            String parent = dot < 0 ? "" : h.substring(dot + 1);
            if (parent.chars().filter(c -> c == '.').count() >= 2) {
                byParent.computeIfAbsent(parent, p -> new ArrayList<>()).add(h);
            }
        }
        byParent.forEach((parent, under) -> {
            if (under.size() >= WILDCARD_AT) {
                out.printf("    # suggestion, not applied: \"*.%s\" would cover these %d hosts (and any other under"
                        + " it)%n", parent, under.size());
            }
        });
    }

    private static String unique(Set<String> names, String wanted) {
        String name = wanted;
        for (int i = 2; !names.add(name); i++) {
            name = wanted + "-" + i;
        }
        return name;
    }

    private static String nameFor(String host) {
        String n = host.replaceAll("[^a-z0-9]+", "-").replaceAll("^-|-$", "");
        return n.isEmpty() ? "rule" : n;
    }

    private static boolean isIp(String host) {
        return IpAddress.parseStrict(host).isPresent();
    }

    /** A YAML double-quoted string: paths are normalized, printable ASCII, but may hold a quote or backslash. */
    private static String quoted(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
