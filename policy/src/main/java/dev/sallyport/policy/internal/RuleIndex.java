package dev.sallyport.policy.internal;

import dev.sallyport.policy.HostPattern;
import dev.sallyport.policy.Rule;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Finds the rules that can match a host without scanning them all: exact hosts in a hash map (name to
 * ascending rule indices), wildcard patterns by their suffix (a host's label suffixes are looked up),
 * and rules with CIDRs in one ascending list (tried for IP literal targets only). Callers take the lowest
 * index that fully matches; each candidate list is ascending, so a list is read only up to its first
 * full match.
 */
public final class RuleIndex {

    private static final CompiledRule[] NONE = new CompiledRule[0];

    private final CompiledRule[] rules;
    private final Map<String, CompiledRule[]> exact;
    private final Map<String, CompiledRule[]> wildcard;
    private final CompiledRule[] withCidrs;

    public RuleIndex(List<Rule> ruleList) {
        rules = new CompiledRule[ruleList.size()];
        Map<String, TreeSet<Integer>> ex = new HashMap<>();
        Map<String, TreeSet<Integer>> wc = new HashMap<>();
        List<CompiledRule> cidr = new ArrayList<>();
        for (int i = 0; i < rules.length; i++) {
            Rule r = ruleList.get(i);
            rules[i] = new CompiledRule(r, i);
            for (HostPattern p : r.hosts()) {
                (p.isWildcard() ? wc : ex).computeIfAbsent(p.name(), k -> new TreeSet<>()).add(i);
            }
            if (rules[i].hasCidrs()) {
                cidr.add(rules[i]);
            }
        }
        exact = freeze(ex);
        wildcard = freeze(wc);
        withCidrs = cidr.toArray(NONE);
    }

    private Map<String, CompiledRule[]> freeze(Map<String, ? extends Set<Integer>> m) {
        Map<String, CompiledRule[]> out = HashMap.newHashMap(m.size());
        m.forEach((k, v) -> out.put(k, v.stream().map(i -> rules[i]).toArray(CompiledRule[]::new)));
        return out;
    }

    /** The rule with this index. */
    public CompiledRule rule(int index) {
        return rules[index];
    }

    /** Rules with this exact host, ascending; null if none. */
    public CompiledRule[] exact(String host) {
        return exact.get(host);
    }

    /** Rules with the pattern {@code *.suffix}, ascending; null if none. */
    public CompiledRule[] wildcard(String suffix) {
        return wildcard.get(suffix);
    }

    /** True when some rule has a wildcard pattern. */
    public boolean hasWildcards() {
        return !wildcard.isEmpty();
    }

    /** Rules with CIDRs, ascending. */
    public CompiledRule[] withCidrs() {
        return withCidrs;
    }
}
