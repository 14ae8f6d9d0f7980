package dev.sallyport.policy.internal;

import dev.sallyport.policy.AuditSettings;
import dev.sallyport.policy.CaSettings;
import dev.sallyport.policy.Cidr;
import dev.sallyport.policy.DefaultDeny;
import dev.sallyport.policy.GitRule;
import dev.sallyport.policy.HostPattern;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.Limits;
import dev.sallyport.policy.LiteralAddresses;
import dev.sallyport.policy.Mode;
import dev.sallyport.policy.NetworkSettings;
import dev.sallyport.policy.Policy;
import dev.sallyport.policy.PolicyProblem;
import dev.sallyport.policy.PrivateException;
import dev.sallyport.policy.Registry;
import dev.sallyport.policy.ProxySettings;
import dev.sallyport.policy.Rule;
import dev.sallyport.policy.SandboxSettings;
import dev.sallyport.policy.SecretSource;
import dev.sallyport.policy.SecretSpec;
import dev.sallyport.policy.Timeouts;
import dev.sallyport.policy.UpstreamProxy;
import dev.sallyport.policy.UpstreamSettings;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Turns a composed YAML tree into a {@link Policy}, section by section, recording every problem. Rules and
 * secrets are read by {@link RuleParser}. Missing keys take the defaults of {@link Policy#defaults()}.
 */
public final class PolicyParser {

    static final String ADDRESS = "HOST:PORT, e.g. 127.0.0.1:3128 or [::1]:3128";
    static final String DURATION = "a duration such as 250ms, 30s, 5m or 1h";

    private final YamlTree t;
    private final Path baseDir;
    private final Path source;

    public PolicyParser(YamlTree tree, Path baseDir, Path source) {
        this.t = tree;
        this.baseDir = baseDir;
        this.source = source;
    }

    /** The policy, or null when problems were recorded. */
    public Policy parse(Node root) {
        Policy d = Policy.defaults();
        if (root == null || root.getTag().equals(Tag.NULL)) {
            return new Policy(d.proxy(), d.ca(), d.audit(), d.mode(), d.upstream(), d.network(), List.of(),
                    List.of(), source);
        }
        Map<String, Node> top = t.mapping(root, "", Set.of("proxy", "ca", "audit", "mode", "upstream", "network",
                "rules", "secrets", "registries", "git", "sandbox"));
        if (top == null) {
            return null;
        }
        ProxySettings proxy = section(top, "proxy", d.proxy(), this::proxy);
        CaSettings ca = section(top, "ca", d.ca(), this::ca);
        AuditSettings audit = section(top, "audit", d.audit(), this::audit);
        Mode mode = section(top, "mode", d.mode(), n -> t.parsed(n, "mode", "enforce or audit", PolicyParser::mode));
        UpstreamSettings upstream = section(top, "upstream", d.upstream(), this::upstream);
        NetworkSettings network = section(top, "network", d.network(), this::network);
        RuleParser rp = new RuleParser(t, baseDir);
        List<Rule> rules = section(top, "rules", List.of(), rp::rules);
        List<SecretSpec> secrets = section(top, "secrets", List.of(), rp::secrets);
        RegistryParser registryParser = new RegistryParser(t, rp, baseDir);
        List<Registry> registries = section(top, "registries", List.of(), registryParser::registries);
        if (registries != null && rules != null) {
            registryParser.conflicts(registries, rules, top.get("rules"));
        }
        List<GitRule> git = section(top, "git", List.of(), new GitParser(t, rp)::entries);
        SandboxSettings sandbox = section(top, "sandbox", SandboxSettings.DEFAULTS, this::sandbox);
        if (!t.problems().isEmpty() || git == null || sandbox == null || proxy == null || ca == null || audit == null || mode == null
                || upstream == null || network == null || rules == null || secrets == null || registries == null) {
            return null;
        }
        try {
            return new Policy(proxy, ca, audit, mode, upstream, network, rules, secrets, source, registries, git,
                    sandbox);
        } catch (IllegalArgumentException e) {
            t.problem(root, "", e.getMessage(), "a consistent policy");
            return null;
        }
    }

    /** Problems so far, for the loader. */
    public List<PolicyProblem> problems() {
        return t.problems();
    }

    private <T> T section(Map<String, Node> map, String key, T fallback, Function<Node, T> read) {
        Node n = map.get(key);
        if (n == null || n.getTag().equals(Tag.NULL)) {
            return fallback;
        }
        return read.apply(n);
    }

    private static boolean given(Map<String, Node> map, String key) {
        Node n = map.get(key);
        return n != null && !n.getTag().equals(Tag.NULL);
    }

    private static Mode mode(String s) {
        return switch (s) {
            case "enforce" -> Mode.ENFORCE;
            case "audit" -> Mode.AUDIT;
            default -> throw new IllegalArgumentException("'" + s + "' is not a mode");
        };
    }

    private ProxySettings proxy(Node node) {
        Map<String, Node> m = t.mapping(node, "proxy", Set.of("listen", "admin", "limits", "timeouts", "admin_token",
                "http2", "transparent", "dns", "metrics_identities"));
        if (m == null) {
            return null;
        }
        ProxySettings d = ProxySettings.DEFAULTS;
        HostPort listen = section(m, "listen", d.listen(), n -> t.parsed(n, "proxy.listen", ADDRESS, HostPort::parse));
        HostPort admin = section(m, "admin", d.admin(), n -> t.parsed(n, "proxy.admin", ADDRESS, HostPort::parse));
        Limits limits = section(m, "limits", d.limits(), this::limits);
        Timeouts timeouts = section(m, "timeouts", d.timeouts(), this::timeouts);
        String tokenEnv = null;
        Path tokenFile = null;
        Node tokenNode = m.get("admin_token");
        Map<String, Node> tm = tokenNode == null ? null
                : t.mapping(tokenNode, "proxy.admin_token", Set.of("env", "file"));
        if (tm != null && tm.size() != 1) {
            t.problem(tokenNode, "proxy.admin_token", "has " + tm.size() + " sources",
                    "exactly one of {env: NAME} or {file: PATH}");
        } else if (tm != null && tm.containsKey("env")) {
            tokenEnv = t.parsed(tm.get("env"), "proxy.admin_token.env", "an environment variable name", s -> {
                new dev.sallyport.policy.SecretSource.Env(s); // validates the name
                return s;
            });
        } else if (tm != null) {
            tokenFile = path(tm.get("file"), "proxy.admin_token.file");
        }
        HostPort transparent = section(m, "transparent", null,
                n -> t.parsed(n, "proxy.transparent", ADDRESS, HostPort::parse));
        HostPort dns = section(m, "dns", null, n -> t.parsed(n, "proxy.dns", ADDRESS, HostPort::parse));
        if (listen == null || admin == null || limits == null || timeouts == null
                || (given(m, "transparent") && transparent == null) || (given(m, "dns") && dns == null)) {
            return null;
        }
        if (!distinct(m, listen, admin, transparent, dns)) {
            return null;
        }
        Boolean http2 = m.containsKey("http2") ? t.bool(m.get("http2"), "proxy.http2") : Boolean.TRUE;
        List<String> metricsIdentities = new RuleParser(t, baseDir).identities(m, "metrics_identities", "proxy");
        if (http2 == null || metricsIdentities == null) {
            return null;
        }
        if (metricsIdentities.size() > ProxySettings.MAX_METRICS_IDENTITIES) {
            t.problem(m.get("metrics_identities"), "proxy.metrics_identities", "has " + metricsIdentities.size()
                    + " names", "at most " + ProxySettings.MAX_METRICS_IDENTITIES + " (each is a label value)");
            return null;
        }
        return new ProxySettings(listen, admin, limits, timeouts, tokenEnv, tokenFile, http2, transparent, dns,
                metricsIdentities);
    }

    /** No two of the proxy's TCP listeners share an address and port (port 0 picks one each). */
    private boolean distinct(Map<String, Node> m, HostPort listen, HostPort admin, HostPort transparent,
                             HostPort dns) {
        java.util.LinkedHashMap<String, HostPort> listeners = new java.util.LinkedHashMap<>();
        listeners.put("listen", listen);
        listeners.put("admin", admin);
        listeners.put("transparent", transparent);
        listeners.put("dns", dns);
        java.util.Map<HostPort, String> seen = new java.util.HashMap<>();
        for (var e : listeners.entrySet()) {
            HostPort address = e.getValue();
            if (address == null || address.port() == 0) {
                continue;
            }
            String earlier = seen.putIfAbsent(address, e.getKey());
            if (earlier != null) {
                t.problem(m.get(e.getKey()), "proxy." + e.getKey(), "is the same address as proxy." + earlier,
                        "a different address or port");
                return false;
            }
        }
        return true;
    }

    private Limits limits(Node node) {
        Map<String, Node> m = t.mapping(node, "proxy.limits", Set.of("max_connections", "max_tunnels",
                "max_header_bytes", "max_initial_line_bytes", "max_body_bytes", "max_connections_per_client",
                "max_tunnels_per_client", "max_exchanges_per_client"));
        if (m == null) {
            return null;
        }
        Limits d = Limits.DEFAULTS;
        Long conns = limit(m, "max_connections", d.maxConnections(), 1, Integer.MAX_VALUE);
        Long tunnels = limit(m, "max_tunnels", d.maxTunnels(), 1, Integer.MAX_VALUE);
        Long header = limit(m, "max_header_bytes", d.maxHeaderBytes(), 1024, 16 << 20);
        Long line = limit(m, "max_initial_line_bytes", d.maxInitialLineBytes(), 256, 1 << 20);
        Long body = limit(m, "max_body_bytes", d.maxBodyBytes(), 0, Long.MAX_VALUE);
        Long clientConns = limit(m, "max_connections_per_client", d.maxConnectionsPerClient(), 1, Integer.MAX_VALUE);
        Long clientTunnels = limit(m, "max_tunnels_per_client", d.maxTunnelsPerClient(), 1, Integer.MAX_VALUE);
        Long clientExchanges = limit(m, "max_exchanges_per_client", d.maxExchangesPerClient(), 1, Integer.MAX_VALUE);
        if (conns == null || tunnels == null || header == null || line == null || body == null
                || clientConns == null || clientTunnels == null || clientExchanges == null) {
            return null;
        }
        return new Limits(conns.intValue(), tunnels.intValue(), header.intValue(), line.intValue(), body,
                clientConns.intValue(), clientTunnels.intValue(), clientExchanges.intValue());
    }

    private Long limit(Map<String, Node> m, String key, long fallback, long min, long max) {
        Node n = m.get(key);
        return n == null ? Long.valueOf(fallback) : t.integer(n, "proxy.limits." + key, min, max);
    }

    private Timeouts timeouts(Node node) {
        Map<String, Node> m = t.mapping(node, "proxy.timeouts", Set.of("connect", "tls", "response_headers", "idle",
                "shutdown_grace"));
        if (m == null) {
            return null;
        }
        Timeouts d = Timeouts.DEFAULTS;
        Duration connect = duration(m, "connect", d.connect(), false);
        Duration tls = duration(m, "tls", d.tls(), false);
        Duration headers = duration(m, "response_headers", d.responseHeaders(), false);
        Duration idle = duration(m, "idle", d.idle(), false);
        Duration grace = duration(m, "shutdown_grace", d.shutdownGrace(), true);
        if (connect == null || tls == null || headers == null || idle == null || grace == null) {
            return null;
        }
        return new Timeouts(connect, tls, headers, idle, grace);
    }

    private Duration duration(Map<String, Node> m, String key, Duration fallback, boolean zeroOk) {
        Node n = m.get(key);
        if (n == null) {
            return fallback;
        }
        String expected = zeroOk ? DURATION : DURATION + ", above zero";
        Duration d = t.parsed(n, "proxy.timeouts." + key, expected, Timeouts::parseDuration);
        if (d != null && d.isZero() && !zeroOk) {
            t.problem(n, "proxy.timeouts." + key, "is zero", expected);
            return null;
        }
        return d;
    }

    private CaSettings ca(Node node) {
        Map<String, Node> m = t.mapping(node, "ca", Set.of("cert", "key"));
        if (m == null) {
            return null;
        }
        Path cert = m.containsKey("cert") ? path(m.get("cert"), "ca.cert") : null;
        Path key = m.containsKey("key") ? path(m.get("key"), "ca.key") : null;
        if (m.containsKey("cert") != m.containsKey("key")) {
            t.problem(node, "ca", "names only one of cert and key", "both cert and key, or no ca section");
            return null;
        }
        return (cert == null) != (key == null) ? null : new CaSettings(cert, key);
    }

    private SandboxSettings sandbox(Node node) {
        Map<String, Node> m = t.mapping(node, "sandbox", Set.of("git", "hold", "scratch"));
        if (m == null) {
            return null;
        }
        SandboxSettings d = SandboxSettings.DEFAULTS;
        SandboxSettings.GitAccess git = section(m, "git", d.git(), n -> t.parsed(n, "sandbox.git",
                "writable or read-only", s -> switch (s) {
                    case "writable" -> SandboxSettings.GitAccess.WRITABLE;
                    case "read-only" -> SandboxSettings.GitAccess.READ_ONLY;
                    default -> throw new IllegalArgumentException("'" + s + "' is not a git access");
                }));
        int before = t.problems().size();
        List<String> hold = section(m, "hold", d.hold(), n -> t.list(n, "sandbox.hold",
                SandboxSettings.HOLD_EXPECTED, SandboxSettings::checkHold));
        List<String> scratch = section(m, "scratch", d.scratch(), n -> t.list(n, "sandbox.scratch",
                SandboxSettings.SCRATCH_EXPECTED, SandboxSettings::checkScratch));
        if (git == null || hold == null || scratch == null || t.problems().size() != before) {
            return null;
        }
        return new SandboxSettings(git, hold, scratch);
    }

    private AuditSettings audit(Node node) {
        Map<String, Node> m = t.mapping(node, "audit", Set.of("path", "rotate_bytes", "rotate_every"));
        if (m == null) {
            return null;
        }
        Node p = m.get("path");
        String s = p == null ? "-" : t.string(p, "audit.path", "'-' for stdout or a file path");
        Node bytesNode = m.get("rotate_bytes");
        Long bytes = bytesNode == null ? Long.valueOf(0) : t.integer(bytesNode, "audit.rotate_bytes", 4096, Long.MAX_VALUE);
        Node everyNode = m.get("rotate_every");
        Duration every = everyNode == null ? Duration.ZERO
                : t.parsed(everyNode, "audit.rotate_every", DURATION + ", above zero", Timeouts::parseDuration);
        if (s == null || bytes == null || every == null) {
            return null;
        }
        if (s.equals("-")) {
            if (bytesNode != null || everyNode != null) {
                t.problem(bytesNode != null ? bytesNode : everyNode, "audit", "rotates stdout", "a file path to rotate");
                return null;
            }
            return AuditSettings.STDOUT;
        }
        if (everyNode != null && every.isZero()) {
            t.problem(everyNode, "audit.rotate_every", "is zero", DURATION + ", above zero");
            return null;
        }
        Path resolved = path(p, "audit.path");
        return resolved == null ? null : new AuditSettings(resolved.toString(), bytes, every);
    }

    private UpstreamSettings upstream(Node node) {
        Map<String, Node> m = t.mapping(node, "upstream", Set.of("trust", "proxy"));
        if (m == null) {
            return null;
        }
        UpstreamSettings trusted = trust(m.get("trust"));
        if (!m.containsKey("proxy")) {
            return trusted;
        }
        UpstreamProxy parent = parentProxy(m.get("proxy"));
        return trusted == null || parent == null ? null : trusted.withProxy(parent);
    }

    private UpstreamProxy parentProxy(Node node) {
        Map<String, Node> m = t.mapping(node, "upstream.proxy", Set.of("address", "credentials", "no_proxy"));
        if (m == null) {
            return null;
        }
        boolean ok = true;
        HostPort address = null;
        if (m.get("address") == null) {
            t.problem(node, "upstream.proxy", "has no address", "address: HOST:PORT of the parent proxy");
            ok = false;
        } else {
            address = t.parsed(m.get("address"), "upstream.proxy.address", "HOST:PORT of the parent proxy",
                    s -> {
                        HostPort hp = HostPort.parse(s);
                        if (hp.port() == 0) {
                            throw new IllegalArgumentException("port 0");
                        }
                        return hp;
                    });
            ok = address != null;
        }
        SecretSource credentials = null;
        Node cn = m.get("credentials");
        if (cn != null) {
            Map<String, Node> cm = t.mapping(cn, "upstream.proxy.credentials", Set.of("env", "file"));
            if (cm == null) {
                ok = false;
            } else if (cm.size() != 1) {
                t.problem(cn, "upstream.proxy.credentials", "has " + cm.size() + " sources",
                        "exactly one of {env: NAME} or {file: PATH} holding user:password");
                ok = false;
            } else if (cm.containsKey("env")) {
                credentials = t.parsed(cm.get("env"), "upstream.proxy.credentials.env",
                        "an environment variable name", SecretSource.Env::new);
                ok &= credentials != null;
            } else {
                Path file = path(cm.get("file"), "upstream.proxy.credentials.file");
                credentials = file == null ? null : new SecretSource.File(file);
                ok &= file != null;
            }
        }
        List<HostPattern> hosts = new ArrayList<>();
        List<Cidr> nets = new ArrayList<>();
        Node np = m.get("no_proxy");
        List<Node> items = np == null ? List.of()
                : t.sequence(np, "upstream.proxy.no_proxy", "host names, '*.' patterns and networks");
        if (items == null) {
            ok = false;
        } else {
            for (int i = 0; i < items.size(); i++) {
                String where = "upstream.proxy.no_proxy[" + i + "]";
                String s = t.string(items.get(i), where, "a host name, a '*.' pattern or a network");
                if (s == null) {
                    ok = false;
                } else if (s.indexOf('/') >= 0) {
                    Cidr net = t.parsed(items.get(i), where, "a network such as 10.0.0.0/8", Cidr::parse);
                    if (net == null) {
                        ok = false;
                    } else {
                        nets.add(net);
                    }
                } else {
                    HostPattern host = t.parsed(items.get(i), where, HostPattern.EXPECTED, HostPattern::parse);
                    if (host == null) {
                        ok = false;
                    } else {
                        hosts.add(host);
                    }
                }
            }
        }
        return ok ? new UpstreamProxy(address, credentials, hosts, nets) : null;
    }

    private UpstreamSettings trust(Node trust) {
        if (trust == null) {
            return UpstreamSettings.SYSTEM;
        }
        List<Node> items = t.sequence(trust, "upstream.trust", "'system' and PEM file paths");
        if (items == null) {
            return null;
        }
        boolean system = false;
        List<Path> files = new ArrayList<>();
        boolean ok = true;
        for (int i = 0; i < items.size(); i++) {
            String p = "upstream.trust[" + i + "]";
            String s = t.string(items.get(i), p, "'system' or a PEM file path");
            if (s == null) {
                ok = false;
            } else if (s.equals("system")) {
                system = true;
            } else {
                Path f = path(items.get(i), p);
                ok &= f != null;
                if (f != null) {
                    files.add(f);
                }
            }
        }
        if (ok && !system && files.isEmpty()) {
            t.problem(trust, "upstream.trust", "is empty", "'system' and/or PEM file paths");
            return null;
        }
        return ok ? new UpstreamSettings(system, files) : null;
    }

    private NetworkSettings network(Node node) {
        Map<String, Node> m = t.mapping(node, "network", Set.of("deny", "allow_private", "literal_addresses"));
        if (m == null) {
            return null;
        }
        List<Cidr> deny = DefaultDeny.NETWORKS;
        Node dn = m.get("deny");
        String denyExpected = "'default', or a list of 'default' and networks such as 203.0.113.0/24";
        if (dn instanceof ScalarNode s && dn.getTag().equals(Tag.STR)) {
            if (!s.getValue().equals("default")) {
                t.problem(dn, "network.deny", "'" + s.getValue() + "' is not a deny list", denyExpected);
                deny = null;
            }
        } else if (dn != null) {
            List<Node> nodes = t.sequence(dn, "network.deny", denyExpected);
            Set<Cidr> set = new LinkedHashSet<>();
            if (nodes != null) {
                for (int i = 0; i < nodes.size(); i++) {
                    String s = t.string(nodes.get(i), "network.deny[" + i + "]", denyExpected);
                    if (s == null) {
                        continue;
                    }
                    if (s.equals("default")) {
                        set.addAll(DefaultDeny.NETWORKS);
                    } else {
                        Cidr c = t.parsed(nodes.get(i), "network.deny[" + i + "]", denyExpected, Cidr::parse);
                        if (c != null) {
                            set.add(c);
                        }
                    }
                }
            }
            deny = nodes == null ? null : List.copyOf(set);
        }
        List<PrivateException> allow = List.of();
        Node an = m.get("allow_private");
        if (an != null && !an.getTag().equals(Tag.NULL)) {
            allow = t.list(an, "network.allow_private",
                    "NETWORK:PORT or HOST:PORT, e.g. 10.20.0.0/16:5432, [fd00::1]:443 or git.corp.example:443",
                    PrivateException::parse);
        }
        LiteralAddresses literals = LiteralAddresses.NO_ROUTE;
        if (m.containsKey("literal_addresses")) {
            literals = t.parsed(m.get("literal_addresses"), "network.literal_addresses", "no_route or capture",
                    s -> switch (s) {
                        case "no_route" -> LiteralAddresses.NO_ROUTE;
                        case "capture" -> LiteralAddresses.CAPTURE;
                        default -> throw new IllegalArgumentException("'" + s + "' is not a choice here");
                    });
        }
        return deny == null || allow == null || literals == null ? null
                : new NetworkSettings(deny, allow, literals);
    }

    /** A path resolved against the policy file's folder; null after a problem. */
    Path path(Node node, String where) {
        return resolvePath(t, baseDir, node, where);
    }

    static Path resolvePath(YamlTree t, Path baseDir, Node node, String where) {
        String s = t.string(node, where, "a file path");
        if (s == null) {
            return null;
        }
        if (s.indexOf('\0') >= 0) {
            t.problem(node, where, "contains NUL", "a file path");
            return null;
        }
        try {
            return baseDir.resolve(s).normalize();
        } catch (InvalidPathException e) {
            t.problem(node, where, "'" + s + "' is not a valid path", "a file path");
            return null;
        }
    }
}
