package dev.sallyport.policy.internal;

import dev.sallyport.policy.Advisories;
import dev.sallyport.policy.Ecosystem;
import dev.sallyport.policy.HostNames;
import dev.sallyport.policy.PackageRule;
import dev.sallyport.policy.Registry;
import dev.sallyport.policy.Rule;
import dev.sallyport.policy.Timeouts;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * Reads {@code registries} (the {@link Registry} entries, their {@code advisories} folders included) and checks
 * that no plain allow rule reaches a registry's host around its filter.
 */
final class RegistryParser {

    private static final Set<String> KEYS = Set.of("name", "ecosystem", "hosts", "file_hosts", "ports",
            "min_release_age", "advisories", "allow", "deny", "refuse_added_install_scripts",
            "refuse_dropped_provenance", "exceptions", "max_document_bytes");
    private static final String HOST = "an exact host name such as registry.example.com (no wildcards)";
    private static final String AGE = "a duration such as 7d, 36h or 30m, or 0s for none";

    private final YamlTree t;
    private final RuleParser rules;
    private final Path baseDir;

    RegistryParser(YamlTree t, RuleParser rules, Path baseDir) {
        this.t = t;
        this.rules = rules;
        this.baseDir = baseDir;
    }

    List<Registry> registries(Node node) {
        Map<String, Integer> names = new HashMap<>();
        Map<String, String> hostOwners = new HashMap<>();
        return rules.each(node, "registries", "registries (mappings with name, ecosystem, hosts, ...)",
                (item, p) -> registry(item, p, names, hostOwners));
    }

    private Registry registry(Node node, String p, Map<String, Integer> names, Map<String, String> hostOwners) {
        Map<String, Node> m = t.mapping(node, p, KEYS);
        if (m == null) {
            return null;
        }
        int line = node.getStartMark().getLine() + 1;
        String name = rules.name(m, node, p, names, line, "a unique registry name");
        Ecosystem eco = null;
        if (!m.containsKey("ecosystem")) {
            t.problem(node, p, "has no ecosystem", "ecosystem: npm or pypi");
        } else {
            eco = t.parsed(m.get("ecosystem"), p + ".ecosystem", "npm or pypi", Ecosystem::parse);
        }
        List<String> hosts = rules.optionalList(m, "hosts", p, HOST, RegistryParser::exactHost);
        List<String> fileHosts = rules.optionalList(m, "file_hosts", p, HOST, RegistryParser::exactHost);
        if (hosts != null && hosts.isEmpty()) {
            t.problem(m.getOrDefault("hosts", node), p + ".hosts", m.containsKey("hosts") ? "is empty" : "is missing",
                    "the hosts that serve the registry's package documents");
            hosts = null;
        }
        boolean ok = hosts != null && fileHosts != null;
        if (ok) {
            List<Node> hostNodes = new ArrayList<>(((SequenceNode) m.get("hosts")).getValue());
            if (m.get("file_hosts") instanceof SequenceNode s) {
                hostNodes.addAll(s.getValue());
            }
            List<String> all = new ArrayList<>(hosts);
            all.addAll(fileHosts);
            for (int i = 0; i < all.size(); i++) {
                String owner = hostOwners.putIfAbsent(all.get(i), p);
                if (owner != null) {
                    t.problem(hostNodes.get(i), p, "host '" + all.get(i) + "' is already a host of " + owner,
                            "each registry host in one entry");
                    ok = false;
                }
            }
        }
        Set<Integer> ports = m.containsKey("ports") ? rules.ports(m.get("ports"), p + ".ports") : Rule.DEFAULT_PORTS;
        Duration age = Duration.ZERO;
        if (m.containsKey("min_release_age")) {
            age = t.parsed(m.get("min_release_age"), p + ".min_release_age", AGE, RegistryParser::age);
        }
        Path folder = null;
        Advisories advisories = Advisories.NONE;
        if (m.containsKey("advisories")) {
            folder = PolicyParser.resolvePath(t, baseDir, m.get("advisories"), p + ".advisories");
            if (folder != null) {
                try {
                    advisories = Advisories.load(folder);
                } catch (IOException e) {
                    t.problem(m.get("advisories"), p + ".advisories", e.getMessage().replaceAll("\\s+", " "),
                            "a readable folder of OSV records");
                    ok = false;
                }
            }
        }
        List<PackageRule> allow = List.of();
        List<PackageRule> deny = List.of();
        List<PackageRule> exceptions = List.of();
        Boolean scripts = Boolean.FALSE;
        Boolean provenance = Boolean.FALSE;
        if (eco != null) {
            Ecosystem e = eco;
            allow = rules.optionalList(m, "allow", p, PackageRule.EXPECTED, s -> PackageRule.parse(e, s));
            deny = rules.optionalList(m, "deny", p, PackageRule.EXPECTED, s -> PackageRule.parse(e, s));
            exceptions = rules.optionalList(m, "exceptions", p, PackageRule.EXPECTED, s -> PackageRule.parse(e, s));
            for (String key : List.of("refuse_added_install_scripts", "refuse_dropped_provenance", "exceptions")) {
                if (e != Ecosystem.NPM && m.containsKey(key)) {
                    t.problem(m.get(key), p + "." + key, "is an npm check", "no " + key + " in a " + e.key()
                            + " registry");
                    ok = false;
                }
            }
            scripts = m.containsKey("refuse_added_install_scripts")
                    ? t.bool(m.get("refuse_added_install_scripts"), p + ".refuse_added_install_scripts") : scripts;
            provenance = m.containsKey("refuse_dropped_provenance")
                    ? t.bool(m.get("refuse_dropped_provenance"), p + ".refuse_dropped_provenance") : provenance;
        }
        Long maxDoc = m.containsKey("max_document_bytes")
                ? t.integer(m.get("max_document_bytes"), p + ".max_document_bytes", 1024, 1L << 31)
                : Long.valueOf(Registry.DEFAULT_MAX_DOCUMENT_BYTES);
        if (!ok || name == null || eco == null || ports == null || age == null || allow == null || deny == null
                || exceptions == null || scripts == null || provenance == null || maxDoc == null) {
            return null;
        }
        try {
            return new Registry(name, line, eco, hosts, fileHosts, ports, age, folder, advisories, allow, deny,
                    scripts, provenance, exceptions, maxDoc);
        } catch (IllegalArgumentException e) {
            t.problem(node, p, e.getMessage(), "a valid registry");
            return null;
        }
    }

    /**
     * Records a problem for every allow rule that matches a registry's host on one of its ports: such a rule would
     * let requests reach the registry around its filter.
     */
    void conflicts(List<Registry> registries, List<Rule> ruleList, Node rulesNode) {
        List<Node> ruleNodes = rulesNode instanceof SequenceNode s ? s.getValue() : List.of();
        for (Registry reg : registries) {
            for (String host : reg.allHosts()) {
                for (int i = 0; i < ruleList.size(); i++) {
                    Rule rule = ruleList.get(i);
                    if (rule.action() != dev.sallyport.policy.Action.ALLOW
                            || rule.hosts().stream().noneMatch(h -> h.matches(host))
                            || rule.ports().stream().noneMatch(reg.ports()::contains)) {
                        continue;
                    }
                    Node at = i < ruleNodes.size() ? hostsNode(ruleNodes.get(i)) : rulesNode;
                    t.problem(at, "rules[" + i + "].hosts", "rule '" + rule.name() + "' reaches '" + host
                            + "', a host of registry '" + reg.name() + "', around its filter",
                            "registry hosts only in registries (remove the host from the rule, or narrow its"
                                    + " pattern or ports)");
                }
            }
        }
    }

    private static Node hostsNode(Node rule) {
        if (rule instanceof MappingNode m) {
            for (NodeTuple tuple : m.getValue()) {
                if (tuple.getKeyNode() instanceof ScalarNode k && k.getValue().equals("hosts")) {
                    return tuple.getValueNode();
                }
            }
        }
        return rule;
    }

    /** An exact host name (no wildcard, no IP address), normalized. */
    static String exactHost(String s) {
        if (s.startsWith("*")) {
            throw new IllegalArgumentException("'" + s + "' is a wildcard");
        }
        String host = HostNames.normalize(s);
        if (HostNames.isIpLiteral(host)) {
            throw new IllegalArgumentException("'" + s + "' is an IP address");
        }
        return host;
    }

    /** {@code Nd} for days, or a duration {@link Timeouts#parseDuration} reads; {@code 0s} for none. */
    static Duration age(String s) {
        if (s.matches("\\d{1,5}d")) {
            return Duration.ofDays(Long.parseLong(s.substring(0, s.length() - 1)));
        }
        if (s.matches("0+(ms|s|m|h)?")) {
            return Duration.ZERO;
        }
        return Timeouts.parseDuration(s);
    }
}
