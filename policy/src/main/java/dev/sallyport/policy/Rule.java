package dev.sallyport.policy;

import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One entry of {@code rules}. A rule matches a host when one of {@code hosts} matches it or, for an IP
 * literal target, one of {@code cidrs} contains it; then the port, the client identity, the method and
 * the path must match too (empty sets mean "any"). Rules are tried in file order; the first match wins.
 *
 * @param line    the line of the rule in its file (0 for rules built in code)
 * @param clients client identities the rule is for ({@code clients:}; empty: any, {@code anonymous} included):
 *                the names sandboxes registered with the proxy under ({@link Identities})
 * @param allowEncodedSlash when true ({@code allow_encoded_slash: true}), a request path with an escaped slash
 *                {@code %2F} (npm's {@code /@scope%2Fname}) may be allowed by this rule, decided on its decoded form;
 *                otherwise such a path is {@code invalid_path} (see {@link PolicyEngine#onRequest})
 */
public record Rule(String name, int line, Action action, List<HostPattern> hosts, List<Cidr> cidrs,
                   Set<Integer> ports, Set<String> methods, List<PathPattern> paths, TlsMode tls,
                   Set<String> clients, boolean allowEncodedSlash) {

    /** The ports a rule has when it names none. */
    public static final Set<Integer> DEFAULT_PORTS = Set.of(443);

    public Rule {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(action, "action");
        Objects.requireNonNull(tls, "tls");
        if (name.isBlank()) {
            throw new IllegalArgumentException("name: empty (expected: a rule name)");
        }
        hosts = List.copyOf(hosts);
        cidrs = List.copyOf(cidrs);
        ports = Set.copyOf(ports);
        methods = Set.copyOf(methods);
        paths = List.copyOf(paths);
        clients = Set.copyOf(clients);
        if (hosts.isEmpty() && cidrs.isEmpty()) {
            throw new IllegalArgumentException("rule '" + name + "': no hosts and no cidrs (expected: at least one)");
        }
        if (ports.isEmpty()) {
            throw new IllegalArgumentException("rule '" + name + "': ports empty (expected: at least one port)");
        }
        for (int port : ports) {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("rule '" + name + "': port " + port + " (expected: 1..65535)");
            }
        }
        for (String m : methods) {
            if (!isMethodToken(m)) {
                throw new IllegalArgumentException("rule '" + name + "': method '" + m
                        + "' (expected: an uppercase token such as GET)");
            }
        }
        if (tls == TlsMode.PASSTHROUGH && (!methods.isEmpty() || !paths.isEmpty() || allowEncodedSlash)) {
            throw new IllegalArgumentException("rule '" + name + "': tls passthrough with methods, paths or"
                    + " allow_encoded_slash (expected: intercept, since a passthrough tunnel cannot see requests)");
        }
    }

    /** A rule that refuses escaped slashes in paths (the default). */
    public Rule(String name, int line, Action action, List<HostPattern> hosts, List<Cidr> cidrs, Set<Integer> ports,
                Set<String> methods, List<PathPattern> paths, TlsMode tls, Set<String> clients) {
        this(name, line, action, hosts, cidrs, ports, methods, paths, tls, clients, false);
    }

    /** True when requests must be seen to decide (methods or paths are restricted). */
    public boolean restrictsRequests() {
        return !methods.isEmpty() || !paths.isEmpty();
    }

    /** Uppercase letters, digits, '-' and '_', 1..32 characters, starting with a letter. */
    public static boolean isMethodToken(String m) {
        if (m.isEmpty() || m.length() > 32 || m.charAt(0) < 'A' || m.charAt(0) > 'Z') {
            return false;
        }
        for (int i = 0; i < m.length(); i++) {
            char c = m.charAt(i);
            if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
                return false;
            }
        }
        return true;
    }
}
