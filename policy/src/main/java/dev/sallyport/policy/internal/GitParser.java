package dev.sallyport.policy.internal;

import dev.sallyport.policy.GitRule;
import dev.sallyport.policy.Rule;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;

/** Reads {@code git} (the {@link GitRule} entries). */
final class GitParser {

    private static final Set<String> KEYS = Set.of("name", "hosts", "ports", "repositories", "push", "refs",
            "delete", "create_only");
    private static final String HOST = "an exact host name such as git.example.com (no wildcards)";
    private static final String REPOSITORY = "a repository path or glob such as acme/widgets or acme/* (no leading"
            + " '/', no '.git'; '*' within a segment, '**' across)";
    private static final String REF = "a ref or glob under refs/, such as refs/heads/agent/* or refs/tags/**";

    private final YamlTree t;
    private final RuleParser rules;

    GitParser(YamlTree t, RuleParser rules) {
        this.t = t;
        this.rules = rules;
    }

    List<GitRule> entries(Node node) {
        Map<String, Integer> names = new HashMap<>();
        return rules.each(node, "git", "git entries (mappings with name, hosts, push, ...)",
                (item, p) -> entry(item, p, names));
    }

    private GitRule entry(Node node, String p, Map<String, Integer> names) {
        Map<String, Node> m = t.mapping(node, p, KEYS);
        if (m == null) {
            return null;
        }
        int line = node.getStartMark().getLine() + 1;
        String name = rules.name(m, node, p, names, line, "a unique git entry name");
        List<String> hosts = rules.optionalList(m, "hosts", p, HOST, RegistryParser::exactHost);
        if (hosts != null && hosts.isEmpty()) {
            t.problem(m.getOrDefault("hosts", node), p + ".hosts", m.containsKey("hosts") ? "is empty" : "is missing",
                    "the hosts that serve the repositories (git.example.com)");
            hosts = null;
        }
        Set<Integer> ports = m.containsKey("ports") ? rules.ports(m.get("ports"), p + ".ports") : Rule.DEFAULT_PORTS;
        List<String> repositories = m.containsKey("repositories")
                ? rules.optionalList(m, "repositories", p, REPOSITORY, GitParser::repository)
                : List.of(GitRule.ANY_REPOSITORY);
        if (repositories != null && repositories.isEmpty()) {
            t.problem(m.get("repositories"), p + ".repositories", "is empty",
                    "at least one repository (or no repositories key for every repository)");
            repositories = null;
        }
        GitRule.Push push = GitRule.Push.DENY;
        if (m.containsKey("push")) {
            push = t.parsed(m.get("push"), p + ".push", "allow or deny", GitParser::push);
        }
        List<String> refs = rules.optionalList(m, "refs", p, REF, GitParser::ref);
        if (push == GitRule.Push.ALLOW && refs != null && refs.isEmpty()) {
            t.problem(m.getOrDefault("refs", node), p + ".refs", m.containsKey("refs") ? "is empty" : "is missing",
                    "with push: allow, the refs a push may update (refs: [refs/heads/agent/*])");
            refs = null;
        } else if (push == GitRule.Push.DENY && refs != null && !refs.isEmpty()) {
            t.problem(m.get("refs"), p + ".refs", "is given with push: deny",
                    "refs only with push: allow (push: deny refuses every push)");
            refs = null;
        }
        Boolean delete = flag(m, "delete", p, push);
        Boolean createOnly = flag(m, "create_only", p, push);
        if (name == null || hosts == null || ports == null || repositories == null || push == null || refs == null
                || delete == null || createOnly == null) {
            return null;
        }
        try {
            return new GitRule(name, line, hosts, ports, repositories, push, refs, delete, createOnly);
        } catch (IllegalArgumentException e) {
            t.problem(node, p, e.getMessage(), "a valid git entry");
            return null;
        }
    }

    /** {@code delete} or {@code create_only}: false when absent; only with {@code push: allow}. */
    private Boolean flag(Map<String, Node> m, String key, String p, GitRule.Push push) {
        if (!m.containsKey(key)) {
            return Boolean.FALSE;
        }
        if (push == GitRule.Push.DENY) {
            t.problem(m.get(key), p + "." + key, "is given with push: deny", key + " only with push: allow");
            return null;
        }
        return t.bool(m.get(key), p + "." + key);
    }

    private static GitRule.Push push(String s) {
        return switch (s) {
            case "allow" -> GitRule.Push.ALLOW;
            case "deny" -> GitRule.Push.DENY;
            default -> throw new IllegalArgumentException("'" + s + "' is neither allow nor deny");
        };
    }

    private static String repository(String s) {
        if (s.startsWith("/") || s.endsWith("/") || s.endsWith(".git") || s.contains("//") || s.contains("***")
                || !s.chars().allMatch(c -> c > ' ' && c < 0x7f)) {
            throw new IllegalArgumentException("'" + s + "' is not a repository glob");
        }
        return s;
    }

    private static String ref(String s) {
        if (!s.startsWith("refs/") || s.contains("***") || !GitRule.validRef(s.replace("*", "x"))) {
            throw new IllegalArgumentException("'" + s + "' is not a ref glob");
        }
        return s;
    }
}
