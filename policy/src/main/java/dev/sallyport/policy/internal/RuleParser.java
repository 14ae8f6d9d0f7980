package dev.sallyport.policy.internal;

import dev.sallyport.policy.Action;
import dev.sallyport.policy.Cidr;
import dev.sallyport.policy.HostPattern;
import dev.sallyport.policy.Identities;
import dev.sallyport.policy.PathPattern;
import dev.sallyport.policy.Rule;
import dev.sallyport.policy.SecretSource;
import dev.sallyport.policy.SecretSpec;
import dev.sallyport.policy.TlsMode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;

/** Reads {@code rules} and {@code secrets}, recording every problem with its position. */
final class RuleParser {

    private static final Set<String> RULE_KEYS = Set.of("name", "action", "hosts", "cidrs", "ports", "methods",
            "paths", "tls", "clients", "allow_encoded_slash");
    private static final Set<String> SECRET_KEYS = Set.of("name", "from", "hosts", "headers", "placeholder",
            "require", "lazy", "allow_cleartext", "elsewhere_on_own_hosts", "clients");
    private static final String CIDR = "an IPv4 or IPv6 network such as 10.20.0.0/16 or fd00::/8";
    private static final String METHOD = "an uppercase method token such as GET";
    private static final String ENV_NAME = "a name of letters, digits and '_', not starting with a digit";

    private final YamlTree t;
    private final Path baseDir;

    RuleParser(YamlTree t, Path baseDir) {
        this.t = t;
        this.baseDir = baseDir;
    }

    List<Rule> rules(Node node) {
        List<Node> items = t.sequence(node, "rules", "rules (mappings with name, hosts, ...)");
        if (items == null) {
            return null;
        }
        List<Rule> out = new ArrayList<>();
        Map<String, Integer> names = new HashMap<>();
        boolean ok = true;
        for (int i = 0; i < items.size(); i++) {
            Rule r = rule(items.get(i), "rules[" + i + "]", names);
            ok &= r != null;
            if (r != null) {
                out.add(r);
            }
        }
        return ok ? out : null;
    }

    private Rule rule(Node node, String p, Map<String, Integer> names) {
        Map<String, Node> m = t.mapping(node, p, RULE_KEYS);
        if (m == null) {
            return null;
        }
        int line = node.getStartMark().getLine() + 1;
        String name = name(m, node, p, names, line, "a unique rule name");
        Action action = Action.ALLOW;
        if (m.containsKey("action")) {
            action = t.parsed(m.get("action"), p + ".action", "allow or deny", s -> switch (s) {
                case "allow" -> Action.ALLOW;
                case "deny" -> Action.DENY;
                default -> throw new IllegalArgumentException("'" + s + "' is not an action");
            });
        }
        TlsMode tls = TlsMode.INTERCEPT;
        if (m.containsKey("tls")) {
            tls = t.parsed(m.get("tls"), p + ".tls", "intercept or passthrough", s -> switch (s) {
                case "intercept" -> TlsMode.INTERCEPT;
                case "passthrough" -> TlsMode.PASSTHROUGH;
                default -> throw new IllegalArgumentException("'" + s + "' is not a TLS mode");
            });
        }
        List<HostPattern> hosts = optionalList(m, "hosts", p, HostPattern.EXPECTED, HostPattern::parse);
        List<Cidr> cidrs = optionalList(m, "cidrs", p, CIDR, Cidr::parse);
        List<PathPattern> paths = optionalList(m, "paths", p, PathPattern.EXPECTED, PathPattern::parse);
        List<String> methods = optionalList(m, "methods", p, METHOD, s -> {
            if (!Rule.isMethodToken(s)) {
                throw new IllegalArgumentException("'" + s + "' is not an uppercase method token");
            }
            return s;
        });
        List<String> clients = clients(m, p);
        Set<Integer> ports = Rule.DEFAULT_PORTS;
        if (m.containsKey("ports")) {
            ports = ports(m.get("ports"), p + ".ports");
        }
        Boolean encodedSlash = m.containsKey("allow_encoded_slash")
                ? t.bool(m.get("allow_encoded_slash"), p + ".allow_encoded_slash") : Boolean.FALSE;
        boolean ok = name != null && action != null && tls != null && hosts != null && cidrs != null && paths != null
                && methods != null && clients != null && ports != null && encodedSlash != null;
        if (hosts != null && cidrs != null && hosts.isEmpty() && cidrs.isEmpty()) {
            t.problem(node, p, "has neither hosts nor cidrs", "hosts: [...] and/or cidrs: [...], not empty");
            ok = false;
        }
        if (tls == TlsMode.PASSTHROUGH && (m.containsKey("methods") || m.containsKey("paths")
                || Boolean.TRUE.equals(encodedSlash))) {
            t.problem(m.get("tls"), p + ".tls", "passthrough cannot be combined with methods, paths or"
                    + " allow_encoded_slash (a tunnel that is not intercepted shows no requests)",
                    "tls: intercept, or no methods, paths and allow_encoded_slash");
            ok = false;
        }
        if (!ok) {
            return null;
        }
        try {
            return new Rule(name, line, action, hosts, cidrs, ports, Set.copyOf(methods), paths, tls, Set.copyOf(clients),
                    encodedSlash);
        } catch (IllegalArgumentException e) {
            t.problem(node, p, e.getMessage(), "a valid rule");
            return null;
        }
    }

    Set<Integer> ports(Node node, String p) {
        List<Node> items = t.sequence(node, p, "port numbers 1..65535");
        if (items == null) {
            return null;
        }
        if (items.isEmpty()) {
            t.problem(node, p, "is empty", "at least one port number (or no ports key for [443])");
            return null;
        }
        Set<Integer> out = new LinkedHashSet<>();
        boolean ok = true;
        for (int i = 0; i < items.size(); i++) {
            Long v = t.integer(items.get(i), p + "[" + i + "]", 1, 65535);
            ok &= v != null;
            if (v != null) {
                out.add(v.intValue());
            }
        }
        return ok ? out : null;
    }

    /**
     * The entries of the sequence {@code key} ({@code node}), each read by {@code read} (the item and its path,
     * {@code key[i]}; null after its problems); null when any had problems.
     */
    <T> List<T> each(Node node, String key, String expected, java.util.function.BiFunction<Node, String, T> read) {
        List<Node> items = t.sequence(node, key, expected);
        if (items == null) {
            return null;
        }
        List<T> out = new java.util.ArrayList<>();
        boolean ok = true;
        for (int i = 0; i < items.size(); i++) {
            T r = read.apply(items.get(i), key + "[" + i + "]");
            ok &= r != null;
            if (r != null) {
                out.add(r);
            }
        }
        return ok ? out : null;
    }

    /** A list under {@code key}, empty when absent; null after problems (bad items included). */
    <T> List<T> optionalList(Map<String, Node> m, String key, String p, String expected,
                                     java.util.function.Function<String, T> parse) {
        Node n = m.get(key);
        if (n == null) {
            return List.of();
        }
        int before = t.problems().size();
        List<T> out = t.list(n, p + "." + key, expected, parse);
        return t.problems().size() == before ? out : null;
    }

    String name(Map<String, Node> m, Node node, String p, Map<String, Integer> names, int line,
                        String expected) {
        Node n = m.get("name");
        if (n == null) {
            t.problem(node, p, "has no name", expected);
            return null;
        }
        String name = t.string(n, p + ".name", expected);
        if (name == null) {
            return null;
        }
        Integer first = names.putIfAbsent(name, line);
        if (first != null) {
            t.problem(n, p + ".name", "'" + name + "' is already the name of the entry on line " + first, expected);
            return null;
        }
        return name;
    }

    List<SecretSpec> secrets(Node node) {
        List<Node> items = t.sequence(node, "secrets", "secrets (mappings with name, from, hosts, headers)");
        if (items == null) {
            return null;
        }
        List<SecretSpec> out = new ArrayList<>();
        Map<String, Integer> names = new HashMap<>();
        boolean ok = true;
        for (int i = 0; i < items.size(); i++) {
            SecretSpec s = secret(items.get(i), "secrets[" + i + "]", names);
            ok &= s != null;
            if (s != null) {
                out.add(s);
            }
        }
        return ok ? out : null;
    }

    private SecretSpec secret(Node node, String p, Map<String, Integer> names) {
        Map<String, Node> m = t.mapping(node, p, SECRET_KEYS);
        if (m == null) {
            return null;
        }
        int line = node.getStartMark().getLine() + 1;
        String name = name(m, node, p, names, line, "a unique secret name: " + ENV_NAME);
        if (name != null && !isEnvName(name)) {
            t.problem(m.get("name"), p + ".name", "'" + name + "' is not a valid secret name", ENV_NAME);
            name = null;
        }
        SecretSource from = null;
        if (!m.containsKey("from")) {
            t.problem(node, p, "has no 'from'", "from: env:NAME or from: file:PATH");
        } else {
            from = source(m.get("from"), p + ".from");
        }
        List<HostPattern> hosts = requiredList(m, node, "hosts", p, HostPattern.EXPECTED, HostPattern::parse);
        List<String> headers = requiredList(m, node, "headers", p, "header names such as Authorization", s -> {
            if (!SecretSpec.isHeaderNameToken(s)) {
                throw new IllegalArgumentException("'" + s + "' is not a header name");
            }
            return s;
        });
        String placeholder = null;
        if (m.containsKey("placeholder")) {
            placeholder = t.string(m.get("placeholder"), p + ".placeholder", "16..256 printable ASCII characters");
            if (placeholder != null && !SecretSpec.isPlaceholderText(placeholder)) {
                t.problem(m.get("placeholder"), p + ".placeholder", "is not a usable placeholder",
                        "16..256 printable ASCII characters, no spaces");
                placeholder = null;
            }
        }
        Boolean require = m.containsKey("require") ? t.bool(m.get("require"), p + ".require") : Boolean.FALSE;
        Boolean lazy = m.containsKey("lazy") ? t.bool(m.get("lazy"), p + ".lazy") : Boolean.FALSE;
        Boolean cleartext = m.containsKey("allow_cleartext")
                ? t.bool(m.get("allow_cleartext"), p + ".allow_cleartext") : Boolean.FALSE;
        SecretSpec.Elsewhere elsewhere = SecretSpec.Elsewhere.FORWARD;
        if (m.containsKey("elsewhere_on_own_hosts")) {
            elsewhere = t.parsed(m.get("elsewhere_on_own_hosts"), p + ".elsewhere_on_own_hosts", "forward or refuse",
                    s -> switch (s) {
                        case "forward" -> SecretSpec.Elsewhere.FORWARD;
                        case "refuse" -> SecretSpec.Elsewhere.REFUSE;
                        default -> throw new IllegalArgumentException("'" + s + "' is not a choice here");
                    });
        }
        List<String> clients = clients(m, p);
        if (name == null || from == null || hosts == null || headers == null || require == null || lazy == null
                || cleartext == null || elsewhere == null || clients == null
                || (m.containsKey("placeholder") && placeholder == null)) {
            return null;
        }
        try {
            return new SecretSpec(name, line, from, hosts, headers, placeholder, require, lazy, cleartext, elsewhere,
                    Set.copyOf(clients));
        } catch (IllegalArgumentException e) {
            t.problem(node, p, e.getMessage(), "a valid secret");
            return null;
        }
    }

    /** {@code clients:}: identity names ({@link Identities}); none, an empty list or no key: every client. */
    private List<String> clients(Map<String, Node> m, String p) {
        return identities(m, "clients", p);
    }

    /** A list of identity names under {@code key} ({@link Identities}); an empty list when there is no key. */
    List<String> identities(Map<String, Node> m, String key, String p) {
        return optionalList(m, key, p, Identities.EXPECTED, s -> {
            if (!Identities.isValidName(s)) {
                throw new IllegalArgumentException("'" + s + "' is not an identity name");
            }
            return s;
        });
    }

    private <T> List<T> requiredList(Map<String, Node> m, Node node, String key, String p, String expected,
                                     java.util.function.Function<String, T> parse) {
        if (!m.containsKey(key)) {
            t.problem(node, p, "has no '" + key + "'", "a list of " + expected);
            return null;
        }
        List<T> out = optionalList(m, key, p, expected, parse);
        if (out != null && out.isEmpty()) {
            t.problem(m.get(key), p + "." + key, "is empty", "at least one of " + expected);
            return null;
        }
        return out;
    }

    private SecretSource source(Node n, String p) {
        String expected = "env:NAME or file:PATH";
        String s = t.string(n, p, expected);
        if (s == null) {
            return null;
        }
        if (s.startsWith("env:")) {
            String var = s.substring(4);
            if (!isEnvName(var)) {
                t.problem(n, p, "'" + var + "' is not an environment variable name", "env:" + ENV_NAME);
                return null;
            }
            return new SecretSource.Env(var);
        }
        if (s.startsWith("file:") && s.length() > 5) {
            try {
                return new SecretSource.File(baseDir.resolve(s.substring(5)).normalize());
            } catch (java.nio.file.InvalidPathException e) {
                t.problem(n, p, "'" + s.substring(5) + "' is not a valid path", "file:PATH");
                return null;
            }
        }
        t.problem(n, p, "'" + s + "' is not a secret source", expected);
        return null;
    }

    private static boolean isEnvName(String s) {
        if (s.isEmpty() || s.length() > 128 || (s.charAt(0) >= '0' && s.charAt(0) <= '9')) {
            return false;
        }
        return s.chars().allMatch(c -> (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                || c == '_');
    }
}
