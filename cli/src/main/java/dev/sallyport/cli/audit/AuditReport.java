package dev.sallyport.cli.audit;

import java.io.IOException;
import java.io.Writer;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamWriteFeature;

/**
 * A report of audit logs for a person (one self-contained HTML file: no script, no external asset) and the same for
 * tools (JSON): the time range, exchanges over time, the top destinations, every denial grouped by reason, secrets
 * used by name, decisions per rule, and per identity when there are several. Its counts are {@link AuditSummary}'s,
 * so the report and {@code audit summary} always agree.
 */
public final class AuditReport {

    /** Most bars in "exchanges over time". */
    static final int MAX_BARS = 48;
    /** Destinations listed in "top destinations". */
    static final int TOP = 20;

    private final AuditSummary summary = new AuditSummary();
    private final TreeMap<Long, Long> perSecond = new TreeMap<>();
    private final Map<String, long[]> identities = new TreeMap<>();

    public void add(AuditRecord r) {
        summary.add(r);
        boolean exchange = "request".equals(r.event()) && r.status() != null;
        if (exchange && r.ts() != null) {
            try {
                perSecond.merge(Instant.parse(r.ts()).getEpochSecond(), 1L, Long::sum);
            } catch (DateTimeParseException e) {
                // counted by the summary; not placed in time
            }
        }
        if (exchange || "connect".equals(r.event())) {
            long[] counts = identities.computeIfAbsent(r.identity() == null ? "(none)" : r.identity(), k -> new long[2]);
            counts["deny".equals(r.decision()) ? 1 : 0]++;
        }
    }

    /** One bar: exchanges from {@code from} for {@code width}. */
    record Bar(Instant from, Duration width, long exchanges) {}

    List<Bar> bars() {
        List<Bar> out = new ArrayList<>();
        if (perSecond.isEmpty()) {
            return out;
        }
        long first = perSecond.firstKey();
        long last = perSecond.lastKey();
        long width = Math.max(1, (last - first + MAX_BARS) / MAX_BARS);
        long[] counts = new long[(int) ((last - first) / width) + 1];
        perSecond.forEach((second, n) -> counts[(int) ((second - first) / width)] += n);
        for (int i = 0; i < counts.length; i++) {
            out.add(new Bar(Instant.ofEpochSecond(first + i * width), Duration.ofSeconds(width), counts[i]));
        }
        return out;
    }

    public void writeHtml(Writer out, List<String> sources) throws IOException {
        AuditSummary.Figures f = summary.figures();
        StringBuilder h = new StringBuilder(16 * 1024);
        h.append("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>Sallyport audit report</title>\n")
                .append("<style>body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:70em;color:#222}")
                .append("table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{padding:.2em .8em;text-align:left;")
                .append("border-bottom:1px solid #ddd}td.n{text-align:right;font-variant-numeric:tabular-nums}")
                .append(".bars{display:flex;align-items:flex-end;height:10em;gap:2px;border-bottom:1px solid #888}")
                .append(".bars div{flex:1;background:#4a7bd0;min-height:1px}.bar{background:#4a7bd0;height:.8em}")
                .append(".deny{color:#a01010}code{font-size:90%}</style></head><body>\n")
                .append("<h1>Sallyport audit report</h1>\n<p>").append(esc(String.join(", ", sources))).append("<br>")
                .append(f.first() == null ? "no timestamps" : "<span id=\"first\">" + esc(f.first())
                        + "</span> .. <span id=\"last\">" + esc(f.last()) + "</span>").append("</p>\n")
                .append("<table><tr><th>records</th><th>exchanges</th><th>tunnels</th><th>denied</th>")
                .append("<th>would be denied</th><th>signed checkpoints</th></tr><tr>")
                .append(cell("records", f.records())).append(cell("exchanges", f.exchanges()))
                .append(cell("tunnels", f.tunnels())).append(cell("denied", total(f.deniedByReason())))
                .append(cell("would-deny", total(f.wouldDenyByReason()))).append(cell("checkpoints", f.checkpoints()))
                .append("</tr></table>\n<h2>Exchanges over time</h2>\n");
        List<Bar> bars = bars();
        long highest = bars.stream().mapToLong(Bar::exchanges).max().orElse(0);
        if (bars.isEmpty()) {
            h.append("<p>(none)</p>\n");
        } else {
            h.append("<div class=\"bars\">");
            for (Bar b : bars) {
                h.append("<div style=\"height:").append(highest == 0 ? 0 : b.exchanges() * 100 / highest)
                        .append("%\" title=\"").append(b.from()).append(" +").append(b.width().toSeconds()).append(" s: ")
                        .append(b.exchanges()).append("\"></div>");
            }
            h.append("</div>\n<p>").append(bars.getFirst().from()).append(" .. ")
                    .append(bars.getLast().from().plus(bars.getLast().width())).append(", ")
                    .append(bars.getFirst().width().toSeconds()).append(" s per bar, at most ").append(highest)
                    .append(" exchanges in one</p>\n");
        }
        h.append("<h2>Top destinations (allowed exchanges)</h2>\n");
        table(h, "destinations", top(f.reached()), f.reached().values().stream().mapToLong(Long::longValue).max()
                .orElse(0));
        grouped(h, "Denials by reason", "denied", f.deniedByReason());
        if (!f.wouldDenyByReason().isEmpty()) {
            grouped(h, "Would be denied (audit mode), by reason", "would-deny", f.wouldDenyByReason());
        }
        h.append("<h2>Secrets used (by name: exchanges per destination)</h2>\n");
        nested(h, "secrets", f.secrets());
        if (identities.size() > 1) {
            h.append("<h2>Per identity</h2>\n<table id=\"identities\"><tr><th>identity</th><th>decisions allowed</th>")
                    .append("<th>denied</th></tr>\n");
            identities.forEach((who, c) -> h.append("<tr><td>").append(esc(who)).append("</td><td class=\"n\">")
                    .append(c[0]).append("</td><td class=\"n\">").append(c[1]).append("</td></tr>\n"));
            h.append("</table>\n");
        }
        h.append("<h2>Decisions per rule</h2>\n");
        nested(h, "rules", f.rules());
        h.append("</body></html>\n");
        out.write(h.toString());
    }

    public void writeJson(Writer out, List<String> sources) throws IOException {
        AuditSummary.Figures f = summary.figures();
        try (JsonGenerator g = JsonFactory.builder().disable(StreamWriteFeature.AUTO_CLOSE_TARGET).build()
                .createGenerator(out)) {
            g.useDefaultPrettyPrinter();
            g.writeStartObject();
            g.writeArrayFieldStart("sources");
            for (String s : sources) {
                g.writeString(s);
            }
            g.writeEndArray();
            g.writeStringField("first", f.first());
            g.writeStringField("last", f.last());
            g.writeNumberField("records", f.records());
            g.writeNumberField("exchanges", f.exchanges());
            g.writeNumberField("tunnels", f.tunnels());
            g.writeNumberField("checkpoints", f.checkpoints());
            g.writeArrayFieldStart("over_time");
            for (Bar b : bars()) {
                g.writeStartObject();
                g.writeStringField("from", b.from().toString());
                g.writeNumberField("seconds", b.width().toSeconds());
                g.writeNumberField("exchanges", b.exchanges());
                g.writeEndObject();
            }
            g.writeEndArray();
            counts(g, "destinations", f.reached());
            nested(g, "denied", f.deniedByReason());
            nested(g, "would_deny", f.wouldDenyByReason());
            nested(g, "secrets", f.secrets());
            nested(g, "rules", f.rules());
            g.writeObjectFieldStart("identities");
            for (Map.Entry<String, long[]> e : identities.entrySet()) {
                g.writeObjectFieldStart(e.getKey());
                g.writeNumberField("allowed", e.getValue()[0]);
                g.writeNumberField("denied", e.getValue()[1]);
                g.writeEndObject();
            }
            g.writeEndObject();
            g.writeEndObject();
        }
        out.write('\n');
    }

    private static void counts(JsonGenerator g, String name, Map<String, Long> counts) throws IOException {
        g.writeObjectFieldStart(name);
        for (Map.Entry<String, Long> e : counts.entrySet()) {
            g.writeNumberField(e.getKey(), e.getValue());
        }
        g.writeEndObject();
    }

    private static void nested(JsonGenerator g, String name, Map<String, Map<String, Long>> nested) throws IOException {
        g.writeObjectFieldStart(name);
        for (Map.Entry<String, Map<String, Long>> e : nested.entrySet()) {
            counts(g, e.getKey(), e.getValue());
        }
        g.writeEndObject();
    }

    private static List<Map.Entry<String, Long>> top(Map<String, Long> counts) {
        return counts.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder())
                        .thenComparing(Map.Entry.comparingByKey()))
                .limit(TOP).toList();
    }

    private static void table(StringBuilder h, String id, List<Map.Entry<String, Long>> rows, long highest) {
        if (rows.isEmpty()) {
            h.append("<p id=\"").append(id).append("\">(none)</p>\n");
            return;
        }
        h.append("<table id=\"").append(id).append("\">\n");
        for (Map.Entry<String, Long> e : rows) {
            h.append("<tr><td><code>").append(esc(e.getKey())).append("</code></td><td class=\"n\">")
                    .append(e.getValue()).append("</td><td style=\"width:20em\"><div class=\"bar\" style=\"width:")
                    .append(highest == 0 ? 0 : e.getValue() * 100 / highest).append("%\"></div></td></tr>\n");
        }
        h.append("</table>\n");
    }

    private static void grouped(StringBuilder h, String title, String id, Map<String, Map<String, Long>> byReason) {
        h.append("<h2>").append(title).append("</h2>\n");
        if (byReason.isEmpty()) {
            h.append("<p id=\"").append(id).append("\">(none)</p>\n");
            return;
        }
        h.append("<table id=\"").append(id).append("\"><tr><th>reason</th><th>destination</th><th>attempts</th></tr>\n");
        byReason.forEach((reason, where) -> where.forEach((dest, n) -> h.append("<tr><td class=\"deny\">")
                .append(esc(reason)).append("</td><td><code>").append(esc(dest)).append("</code></td><td class=\"n\">")
                .append(n).append("</td></tr>\n")));
        h.append("</table>\n");
    }

    private static void nested(StringBuilder h, String id, Map<String, Map<String, Long>> nested) {
        if (nested.isEmpty()) {
            h.append("<p id=\"").append(id).append("\">(none)</p>\n");
            return;
        }
        h.append("<table id=\"").append(id).append("\">\n");
        nested.forEach((name, counts) -> {
            StringBuilder c = new StringBuilder();
            counts.forEach((k, v) -> c.append(c.isEmpty() ? "" : ", ").append(esc(k)).append(' ').append(v));
            h.append("<tr><td><code>").append(esc(name)).append("</code></td><td>").append(c).append("</td></tr>\n");
        });
        h.append("</table>\n");
    }

    private static String cell(String id, long n) {
        return "<td class=\"n\" id=\"" + id + "\">" + n + "</td>";
    }

    private static long total(Map<String, Map<String, Long>> nested) {
        return nested.values().stream().flatMap(m -> m.values().stream()).mapToLong(Long::longValue).sum();
    }

    /** Text for HTML: the five characters that could open markup escaped, and nothing outside printable ASCII. */
    static String esc(String s) {
        StringBuilder b = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '&' -> b.append("&amp;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                default -> {
                    if (c >= 0x20 && c < 0x7f) {
                        b.append(c);
                    } else {
                        b.append("&#").append((int) c).append(';');
                    }
                }
            }
        }
        return b.toString();
    }
}
