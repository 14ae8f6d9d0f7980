package dev.sallyport.policy;

import java.util.ArrayList;
import java.util.List;

/**
 * A pinned range of versions, as a package rule spells it after its {@code @}: comparators that must all hold,
 * separated by spaces or commas ({@code >=1.2.0 <2.0.0}, {@code ==1.4.2}, {@code 1.4.2}, {@code !=1.4.3}).
 * Compared in the ecosystem's order; no caret or tilde shorthands (spell the bounds).
 */
public final class VersionRange {

    /** What a range may hold, for error messages. */
    public static final String EXPECTED = "comparators such as '>=1.2.0 <2.0.0', '==1.4.2' or '!=1.4.3'";

    private record Comparator(String op, String version) {}

    private final String text;
    private final List<Comparator> comparators;

    private VersionRange(String text, List<Comparator> comparators) {
        this.text = text;
        this.comparators = List.copyOf(comparators);
    }

    /** Parses a range; IllegalArgumentException with a short reason otherwise. */
    public static VersionRange parse(String text) {
        List<Comparator> out = new ArrayList<>();
        for (String part : text.strip().split("[\\s,]+")) {
            if (part.isEmpty()) {
                continue;
            }
            String op = part.startsWith(">=") || part.startsWith("<=") || part.startsWith("==")
                    || part.startsWith("!=") ? part.substring(0, 2)
                    : part.startsWith(">") || part.startsWith("<") || part.startsWith("=") ? part.substring(0, 1) : "";
            String version = part.substring(op.length());
            if (version.isEmpty() || !version.matches("[0-9A-Za-z.+_!-]+") || !Character.isDigit(version.charAt(0))) {
                throw new IllegalArgumentException("'" + text + "' is not a version range");
            }
            out.add(new Comparator(op.isEmpty() || op.equals("=") ? "==" : op, version));
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("'" + text + "' is not a version range");
        }
        return new VersionRange(text.strip(), out);
    }

    /** True when {@code version} satisfies every comparator, in {@code ecosystem}'s order. */
    public boolean contains(Ecosystem ecosystem, String version) {
        for (Comparator c : comparators) {
            int cmp = ecosystem.compare(version, c.version());
            boolean holds = switch (c.op()) {
                case ">=" -> cmp >= 0;
                case "<=" -> cmp <= 0;
                case ">" -> cmp > 0;
                case "<" -> cmp < 0;
                case "!=" -> cmp != 0;
                default -> cmp == 0;
            };
            if (!holds) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof VersionRange r && text.equals(r.text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    @Override
    public String toString() {
        return text;
    }
}
