package dev.sallyport.policy;

import dev.sallyport.policy.internal.CompiledRule;
import dev.sallyport.policy.internal.RuleIndex;
import java.util.List;
import java.util.Objects;

/**
 * Decides CONNECTs, requests and dials for one {@link Policy}. Immutable and thread-safe; reload builds a
 * new engine. No regex and no heavy allocation per call: candidate rules come from {@link RuleIndex}
 * (exact hosts by hash, wildcards by label suffix, CIDR rules for IP literals), and the lowest-index
 * candidate that fully matches decides.
 *
 * <p>CONNECT ({@link #onConnect}): a rule whose host, port and client match decides with its action when
 * it restricts neither methods nor paths. An allow rule that restricts them lets the CONNECT open (the
 * requests inside are decided in full by {@link #onRequest}); a deny rule that restricts them is skipped,
 * and if a passthrough rule then decides, the tunnel is intercepted instead so that the skipped deny rule
 * can still see the requests. No match is a deny ({@code no_matching_rule}).
 *
 * <p>{@code mode: audit} turns rule denies ({@code denied_by_rule}, {@code no_matching_rule} and the
 * {@code *_not_allowed} reasons) into WOULD_DENY. Invalid input ({@code invalid_host}, {@code invalid_path},
 * {@code invalid_method}, {@code invalid_port}) and {@link #onDial} denies ({@code private_address}) stay
 * DENY in both modes: audit mode must not open a way to cloud metadata or to hosts the proxy cannot name.
 */
public final class PolicyEngine {

    private final Policy policy;
    private final RuleIndex index;
    private final boolean audit;
    private final Cidr[] deny4;
    private final Cidr[] deny6;
    private final PrivateException[] allowPrivate;
    private final Cidr[] ownAddresses;
    private final int[] ownPorts;
    private final boolean encodedSlashRules;
    private final int[] rulePorts;
    private final java.util.Map<String, Registry> registryHosts;
    private final java.util.Map<String, List<GitRule>> gitHosts;

    private PolicyEngine(Policy policy) {
        this.policy = policy;
        List<Rule> rules = new java.util.ArrayList<>();
        java.util.Map<String, Registry> byHost = new java.util.HashMap<>();
        for (Registry r : policy.registries()) {
            rules.add(registryRule(r));
            r.allHosts().forEach(h -> byHost.put(h, r));
        }
        rules.addAll(policy.rules());
        this.registryHosts = java.util.Map.copyOf(byHost);
        java.util.Map<String, List<GitRule>> git = new java.util.HashMap<>();
        for (GitRule g : policy.git()) {
            g.hosts().forEach(h -> git.computeIfAbsent(h, k -> new java.util.ArrayList<>()).add(g));
        }
        git.replaceAll((h, entries) -> List.copyOf(entries));
        this.gitHosts = java.util.Map.copyOf(git);
        this.index = new RuleIndex(rules);
        this.audit = policy.mode() == Mode.AUDIT;
        this.deny4 = policy.network().deny().stream().filter(c -> c.base().isV4()).toArray(Cidr[]::new);
        this.deny6 = policy.network().deny().stream().filter(c -> !c.base().isV4()).toArray(Cidr[]::new);
        this.allowPrivate = policy.network().allowPrivate().toArray(new PrivateException[0]);
        List<HostPort> own = List.of(policy.proxy().listen(), policy.proxy().admin()).stream()
                .filter(hp -> HostNames.isIpLiteral(hp.host())).toList();
        this.ownAddresses = own.stream().map(hp -> Cidr.parse(hp.host())).toArray(Cidr[]::new);
        this.ownPorts = own.stream().mapToInt(HostPort::port).toArray();
        this.encodedSlashRules = rules.stream().anyMatch(Rule::allowEncodedSlash);
        this.rulePorts = rules.stream().flatMap(r -> r.ports().stream()).mapToInt(Integer::intValue)
                .distinct().sorted().toArray();
    }

    public static PolicyEngine compile(Policy policy) {
        return new PolicyEngine(Objects.requireNonNull(policy, "policy"));
    }

    public Policy policy() {
        return policy;
    }

    /**
     * The registry whose hosts include {@code normalizedHost} on {@code port}, or null: requests to it are filtered
     * (package documents) or checked (files) by the proxy after this engine allowed them.
     */
    public Registry registry(String normalizedHost, int port) {
        Registry r = registryHosts.get(normalizedHost);
        return r != null && r.ports().contains(port) ? r : null;
    }

    /**
     * The {@code git:} entries for {@code normalizedHost} on {@code port}, in policy order; empty when none: then
     * pushes to it are not the proxy's business.
     */
    public List<GitRule> git(String normalizedHost, int port) {
        List<GitRule> all = gitHosts.get(normalizedHost);
        if (all == null) {
            return List.of();
        }
        return all.stream().allMatch(g -> g.ports().contains(port)) ? all
                : all.stream().filter(g -> g.ports().contains(port)).toList();
    }

    /**
     * The rule a registry entry stands for, tried before the file's rules: its hosts and ports, GET and HEAD only
     * (nothing is published through the proxy), and npm's {@code /@scope%2Fname} decided decoded.
     */
    private static Rule registryRule(Registry r) {
        return new Rule(r.ruleName(), r.line(), Action.ALLOW, r.allHosts().stream().map(HostPattern::parse).toList(),
                List.of(), r.ports(), java.util.Set.of("GET", "HEAD"), List.of(), TlsMode.INTERCEPT,
                java.util.Set.of(), true);
    }

    /**
     * Decides a CONNECT to {@code host:port}. {@code host} is the target without port, as sent (a name, a
     * dotted quad, or IPv6 with or without brackets); it is normalized here, and a host that cannot be
     * normalized is {@code invalid_host}. The proxy should dial, and compare Host headers and SNI against,
     * {@code HostNames.normalize(host)}: the name this decision was made for.
     *
     * @param client nullable: the client identity
     */
    public Decision onConnect(String host, int port, String client) {
        return decide(host, port, null, null, client, true).decision();
    }

    /**
     * Decides a DNS lookup of {@code host} (a name; an IP literal is {@code invalid_host}): allowed when a CONNECT to
     * it on some port a rule names would be ({@link #onConnect}), so that a name no rule can allow is never given an
     * address. The first port's allowing (or, in audit mode, letting-through) decision is returned; when none
     * permits traffic, the decision for the lowest port.
     *
     * @param client nullable: the client identity
     */
    public Decision onLookup(String host, String client) {
        String name;
        try {
            name = HostNames.normalize(host);
        } catch (IllegalArgumentException e) {
            return hard(Reasons.INVALID_HOST, null);
        }
        if (HostNames.isIpLiteral(name)) {
            return hard(Reasons.INVALID_HOST, null);
        }
        Decision first = null;
        Decision through = null;
        for (int port : rulePorts) {
            Decision d = decide(name, port, null, null, client, true).decision();
            if (d.verdict() == Verdict.ALLOW) {
                return d;
            }
            if (through == null && d.permitsTraffic()) {
                through = d;
            }
            first = first == null ? d : first;
        }
        return through != null ? through : first != null ? first : soft(Reasons.NO_MATCHING_RULE, null, null);
    }

    /**
     * Decides one request in full; {@code rawPathAndQuery} is the origin-form request target (the path of
     * an absolute-form target, with its query, which is stripped before matching; see
     * {@link PathNormalizer}). Anything that does not start with {@code /} ({@code *} of OPTIONS, a full
     * URL) is {@code invalid_path}. The method must be an uppercase token ({@code invalid_method}). A path
     * that backends may read in more than one way ({@link PathNormalizer#readings}: {@code ;parameters}, an
     * escaped {@code ?} or {@code #}) is allowed only when every reading is; otherwise the first reading's
     * refusal decides, recorded with the normal path.
     *
     * <p>An escaped slash ({@code %2F}) is {@code invalid_path} unless the rule that decides has
     * {@code allow_encoded_slash}: then the rules decide on the path with {@code %2F} as a separator (so
     * {@code /@scope%2Fname} matches {@code /@scope/*}), every reading of it as above, an escape that makes an empty
     * or dot segment once decoded is {@code invalid_path} ({@code /public/..%2Fprivate}), an allow rule without the
     * option that would decide is {@code invalid_path}, and a deny rule before the allowing one also denies when it
     * matches the path as sent ({@code %2F} inside its segment, as a backend that does not split there reads it).
     * Recorded with the path as sent, normalized.
     *
     * @param client nullable: the client identity
     */
    public Decision onRequest(String host, int port, String method, String rawPathAndQuery, String client) {
        Objects.requireNonNull(method, "method");
        if (!Rule.isMethodToken(method)) {
            return hard(Reasons.INVALID_METHOD, null);
        }
        List<String> readings;
        try {
            readings = PathNormalizer.readings(rawPathAndQuery);
        } catch (IllegalArgumentException e) {
            return encodedSlashRules && PathNormalizer.hasEncodedSlash(rawPathAndQuery)
                    ? withEncodedSlash(host, port, method, rawPathAndQuery, client) : hard(Reasons.INVALID_PATH, null);
        }
        String path = readings.getFirst();
        Decision d = decide(host, port, method, path, client, false).decision();
        for (int i = 1; i < readings.size() && d.verdict() == Verdict.ALLOW; i++) {
            Decision other = decide(host, port, method, readings.get(i), client, false).decision();
            if (other.verdict() != Verdict.ALLOW) {
                d = other.withPath(path);
            }
        }
        return d;
    }

    /** {@link #onRequest} for a path with an escaped slash, in a policy where some rule may allow one. */
    private Decision withEncodedSlash(String host, int port, String method, String rawPathAndQuery, String client) {
        PathNormalizer.SlashReadings readings;
        try {
            readings = PathNormalizer.slashReadings(rawPathAndQuery);
        } catch (IllegalArgumentException e) {
            return hard(Reasons.INVALID_PATH, null);
        }
        String sent = readings.kept().getFirst();
        Decision d = null;
        int allowing = -1;      // the highest index of a rule that allowed a decoded reading
        for (String reading : readings.decoded()) {
            Outcome o = decide(host, port, method, reading, client, false);
            if (o.decision().verdict() != Verdict.ALLOW) {
                if (d == null || d.verdict() == Verdict.ALLOW) {
                    d = o.decision().withPath(sent);
                }
                continue;
            }
            if (o.rule() == null || !o.rule().encodedSlash) {
                return hard(Reasons.INVALID_PATH, sent);
            }
            allowing = Math.max(allowing, o.rule().index);
            d = d == null ? o.decision().withPath(sent) : d;
        }
        if (d.verdict() != Verdict.ALLOW) {
            return d;
        }
        for (String asSent : readings.kept()) {
            CompiledRule r = decide(host, port, method, asSent, client, false).rule();
            if (r != null && r.deny && r.index < allowing) {
                return soft(Reasons.DENIED, r.rule, sent);
            }
        }
        return d;
    }

    /**
     * Decides whether the proxy may dial {@code address} for {@code host:port}: denied when it is the proxy's
     * own listen or admin address and port ({@code proxy_address}, no exception), or when the address, or an
     * IPv4 address it embeds, is in {@code network.deny}, unless an {@code allow_private} entry names the
     * address (or the host) and the port.
     */
    public Decision onDial(String host, int port, IpAddress address) {
        Objects.requireNonNull(address, "address");
        for (int i = 0; i < ownAddresses.length; i++) {
            if (ownPorts[i] == port && (ownAddresses[i].contains(address) || containsMapped(ownAddresses[i], address))) {
                return hard(Reasons.PROXY_ADDRESS, null);
            }
        }
        if (!isDenied(address)) {
            return new Decision(Verdict.ALLOW, null, 0, Reasons.ADDRESS_ALLOWED, TlsMode.INTERCEPT, null);
        }
        String normalized = null;
        try {
            normalized = host == null ? null : HostNames.normalize(host);
        } catch (IllegalArgumentException e) {
            // host exceptions cannot apply to a host without a valid name
        }
        for (PrivateException p : allowPrivate) {
            if (p.port() != port) {
                continue;
            }
            boolean covers = p.cidr() != null ? p.cidr().contains(address) || containsMapped(p.cidr(), address)
                    : p.host().equals(normalized);
            if (covers) {
                return new Decision(Verdict.ALLOW, null, 0, Reasons.ALLOWED_PRIVATE, TlsMode.INTERCEPT, null);
            }
        }
        return hard(Reasons.PRIVATE_ADDRESS, null);
    }

    /** True when {@code address} or an IPv4 address embedded in it is in {@code network.deny}. */
    public boolean isDenied(IpAddress address) {
        if (inDeny(address)) {
            return true;
        }
        for (IpAddress embedded : DefaultDeny.embeddedIpv4(address)) {
            if (inDeny(embedded)) {
                return true;
            }
        }
        return false;
    }

    private boolean inDeny(IpAddress a) {
        for (Cidr c : a.isV4() ? deny4 : deny6) {
            if (c.contains(a)) {
                return true;
            }
        }
        return false;
    }

    /** True when {@code address} is IPv4-mapped ({@code ::ffff:0:0/96}) and the IPv4 address it spells is in cidr. */
    private static boolean containsMapped(Cidr cidr, IpAddress address) {
        return DefaultDeny.MAPPED.contains(address) && cidr.contains(DefaultDeny.embeddedIpv4(address).getFirst());
    }

    /** A decision and the rule that made it (null when no rule did). */
    private record Outcome(Decision decision, CompiledRule rule) {}

    private Outcome decide(String rawHost, int port, String method, String path, String client, boolean connect) {
        if (port < 1 || port > 65535) {
            return new Outcome(hard(Reasons.INVALID_PORT, path), null);
        }
        String host;
        try {
            host = HostNames.normalize(rawHost);
        } catch (IllegalArgumentException e) {
            return new Outcome(hard(Reasons.INVALID_HOST, path), null);
        }
        IpAddress ip = HostNames.isIpLiteral(host) ? IpAddress.parseStrict(host).orElse(null) : null;
        Search s = new Search(port, method, path, client, connect);
        s.scan(index.exact(host), null);
        if (ip == null) {
            if (index.hasWildcards()) {
                int dot = host.indexOf('.');
                while (dot >= 0) {
                    s.scan(index.wildcard(host.substring(dot + 1)), null);
                    dot = host.indexOf('.', dot + 1);
                }
            }
        } else {
            s.scan(index.withCidrs(), ip);
        }
        if (s.best == Integer.MAX_VALUE) {
            return new Outcome(soft(s.missReason(), null, path), null);
        }
        CompiledRule r = index.rule(s.best);
        if (r.deny) {
            return new Outcome(soft(Reasons.DENIED, r.rule, path), r);
        }
        TlsMode tls = r.rule.tls();
        if (connect && tls == TlsMode.PASSTHROUGH && s.skippedDeny < s.best) {
            tls = TlsMode.INTERCEPT;
        }
        return new Outcome(new Decision(Verdict.ALLOW, r.rule.name(), r.rule.line(), Reasons.ALLOWED, tls, path), r);
    }

    private Decision soft(String reason, Rule rule, String path) {
        return new Decision(audit ? Verdict.WOULD_DENY : Verdict.DENY, rule == null ? null : rule.name(),
                rule == null ? 0 : rule.line(), reason, TlsMode.INTERCEPT, path);
    }

    private static Decision hard(String reason, String path) {
        return new Decision(Verdict.DENY, null, 0, reason, TlsMode.INTERCEPT, path);
    }

    /** One lookup's state: the best (lowest) full match so far, and what explains a miss. */
    private static final class Search {
        final int port;
        final String method;
        final String path;
        final String client;
        final boolean connect;
        int best = Integer.MAX_VALUE;
        int skippedDeny = Integer.MAX_VALUE;
        int missIndex = Integer.MAX_VALUE;
        CompiledRule.Miss miss = CompiledRule.Miss.NONE;

        Search(int port, String method, String path, String client, boolean connect) {
            this.port = port;
            this.method = method;
            this.path = path;
            this.client = client;
            this.connect = connect;
        }

        /** Reads an ascending list up to its first full match below {@link #best}. */
        void scan(CompiledRule[] list, IpAddress ipForCidr) {
            if (list == null) {
                return;
            }
            for (CompiledRule r : list) {
                if (r.index >= best) {
                    return;
                }
                if (ipForCidr != null && !r.cidrMatches(ipForCidr)) {
                    continue;
                }
                if (matches(r)) {
                    best = r.index;
                    return;
                }
            }
        }

        private boolean matches(CompiledRule r) {
            if (connect) {
                if (!r.portMatches(port) || !r.clientMatches(client)) {
                    noteMiss(r, r.portMatches(port) ? CompiledRule.Miss.CLIENT : CompiledRule.Miss.PORT);
                    return false;
                }
                if (r.deny && r.restrictsRequests) {
                    skippedDeny = Math.min(skippedDeny, r.index);
                    return false;
                }
                return true;
            }
            CompiledRule.Miss m = r.missFor(port, method, path, client);
            if (m != CompiledRule.Miss.NONE) {
                noteMiss(r, m);
                return false;
            }
            return true;
        }

        private void noteMiss(CompiledRule r, CompiledRule.Miss m) {
            if (!r.deny && r.index < missIndex) {
                missIndex = r.index;
                miss = m;
            }
        }

        String missReason() {
            return switch (miss) {
                case NONE -> Reasons.NO_MATCHING_RULE;
                case PORT -> Reasons.PORT_NOT_ALLOWED;
                case CLIENT -> Reasons.CLIENT_NOT_ALLOWED;
                case METHOD -> Reasons.METHOD_NOT_ALLOWED;
                case PATH -> Reasons.PATH_NOT_ALLOWED;
            };
        }
    }
}
