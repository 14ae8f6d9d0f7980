package dev.sallyport.policy;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What {@code sallyport policy explain} prints: the decision for one URL, the rule (name and line) that
 * made it, and for {@code https} URLs the CONNECT decision that comes first. URLs with userinfo
 * ({@code https://allowed.com@evil.net/}) are refused with reason {@code invalid_url}: they are the classic
 * way to make a reader see one host while the client connects to another.
 */
public final class Explain {

    /**
     * One explanation.
     *
     * @param connect nullable: the CONNECT stage's decision (https only)
     * @param lines   the text to print, one {@code key: value} per line
     */
    public record Explanation(Decision decision, Decision connect, List<String> lines) {
        public Explanation {
            lines = List.copyOf(lines);
        }

        /** The lines joined by newlines, with a final newline. */
        public String text() {
            return String.join("\n", lines) + "\n";
        }
    }

    private Explain() {}

    /** Explains a URL given as text (as typed on the command line). */
    public static Explanation explain(PolicyEngine engine, String url, String method, String client) {
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            return invalid("'" + HostNames.printable(url) + "' is not a valid URL: " + e.getReason());
        }
        return explain(engine, uri, method, client);
    }

    /**
     * Explains {@code method url} (method GET when null) from client identity {@code client} (nullable).
     */
    public static Explanation explain(PolicyEngine engine, URI url, String method, String client) {
        String m = method == null ? "GET" : method;
        String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            return invalid("scheme '" + scheme + "' (expected: http or https)");
        }
        String authority = url.getRawAuthority();
        if (authority == null || authority.isEmpty()) {
            return invalid("the URL has no host (expected: http://HOST[:PORT]/PATH or https://...)");
        }
        if (authority.indexOf('@') >= 0) {
            return invalid("the URL has userinfo before '@' ('" + HostNames.printable(authority)
                    + "'): the host would be what follows it (expected: no user:password@ in the URL)");
        }
        boolean https = scheme.equals("https");
        String host = authority;
        int port = https ? 443 : 80;
        int colon = authority.lastIndexOf(':');
        if (colon >= 0 && colon > authority.lastIndexOf(']')) {
            host = authority.substring(0, colon);
            try {
                port = Ports.parse(authority.substring(colon + 1), 1);
            } catch (IllegalArgumentException e) {
                return invalid(e.getMessage());
            }
        }
        String rawPath = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
        String target = url.getRawQuery() == null ? rawPath : rawPath + "?" + url.getRawQuery();
        List<String> lines = new ArrayList<>();
        Decision connect = null;
        if (https) {
            connect = engine.onConnect(host, port, client);
        }
        Decision request = engine.onRequest(host, port, m, target, client);
        List<String> registryLines = new ArrayList<>();
        request = registry(engine, hostText(host), port, m, target, request, registryLines);
        request = git(engine, hostText(host), port, m, target, request, registryLines);
        Decision shown = connect != null && !connect.permitsTraffic() ? connect : request;
        lines.add("decision: " + shown.verdict().code());
        lines.add("rule: " + ruleText(shown));
        lines.add("reason: " + shown.reason());
        lines.add("host: " + hostText(host) + ":" + port);
        lines.add("method: " + m);
        lines.add("path: " + (request.normalizedPath() == null ? "(invalid)" : request.normalizedPath()));
        if (connect != null) {
            lines.add("connect: " + connect.verdict().code() + " (rule: " + ruleText(connect) + ", reason: "
                    + connect.reason() + ", tls: " + connect.tls().name().toLowerCase(Locale.ROOT) + ")");
            if (connect.permitsTraffic() && connect.tls() == TlsMode.PASSTHROUGH) {
                lines.add("note: the tunnel is passed through; requests inside it are not seen");
            }
        }
        lines.add("request: " + request.verdict().code() + " (rule: " + ruleText(request) + ", reason: "
                + request.reason() + ")");
        lines.addAll(registryLines);
        if (client != null && !client.equals(Identities.ANONYMOUS)) {
            lines.add("client: " + client);
        }
        return new Explanation(shown, connect, lines);
    }

    /**
     * For a request the rules let through to a registry's host: what it asks for (a package document, a file of one
     * version) and what the registry's rules make of it, as lines; the decision becomes a deny when the rules refuse
     * the package or the file from its name and number alone.
     */
    private static Decision registry(PolicyEngine engine, String host, int port, String method, String target,
                                     Decision request, List<String> lines) {
        Registry r = request.permitsTraffic() ? engine.registry(host, port) : null;
        if (r == null || !(method.equals("GET") || method.equals("HEAD"))) {
            return request;
        }
        lines.add("registry: " + r.name() + " (" + r.ecosystem().key() + ", line " + r.line() + ")");
        String refused = null;
        switch (RegistryRequest.of(r, target, r.hosts().contains(host))) {
            case RegistryRequest.Document d -> {
                lines.add("package: " + d.packageName() + " (its package document)");
                refused = r.packageRefusal(d.packageName());
                if (refused == null) {
                    lines.add("filtered: the versions the registry's rules refuse are left out" + rulesText(r));
                }
            }
            case RegistryRequest.File f -> {
                lines.add("package: " + f.packageName() + " version " + f.version() + " (a file)");
                refused = r.versionRefusal(f.packageName(), f.version());
                if (refused == null && (!r.minReleaseAge().isZero() || r.installScripts() || r.provenance())) {
                    lines.add("then: its package document decides" + rulesText(r));
                }
            }
            case RegistryRequest.UnreadableFile u -> {
                lines.add("package: " + u.packageName() + " (a file whose version cannot be read)");
                refused = RegistryReasons.VERSION_UNKNOWN;
            }
            case RegistryRequest.Other o -> lines.add("passes: neither a package document nor a file of a version");
        }
        if (refused == null) {
            return request;
        }
        lines.add("refused: " + refused);
        return new Decision(Verdict.DENY, r.ruleName(), r.line(), refused, request.tls(), request.normalizedPath());
    }

    /**
     * For a request the rules let through to a host of {@code git:} entries: whether it pushes, to which repository,
     * and which entry decides; a discovery the entry refuses becomes a deny.
     */
    private static Decision git(PolicyEngine engine, String host, int port, String method, String target,
                                Decision request, List<String> lines) {
        List<GitRule> entries = request.permitsTraffic() ? engine.git(host, port) : List.of();
        if (entries.isEmpty()) {
            return request;
        }
        String refused;
        GitRule deciding = null;
        switch (GitRequest.of(method, target)) {
            case GitRequest.Other o -> {
                lines.add("git: not a push (fetches, clones and other requests pass)");
                return request;
            }
            case GitRequest.Unreadable u -> {
                lines.add("git: " + u.why());
                refused = GitReasons.REQUEST_UNREADABLE;
            }
            case GitRequest.PushDiscovery d -> {
                deciding = GitRule.first(entries, d.repository());
                lines.add("git: the discovery of a push to " + d.repository() + gitEntryText(deciding));
                refused = GitRule.discoveryRefusal(deciding);
            }
            case GitRequest.Push p -> {
                deciding = GitRule.first(entries, p.repository());
                lines.add("git: a push to " + p.repository() + gitEntryText(deciding));
                refused = GitRule.discoveryRefusal(deciding);
                if (refused == null) {
                    lines.add("then: each ref update of the body is decided; one refused refuses the push");
                }
            }
        }
        if (refused == null) {
            return request;
        }
        lines.add("refused: " + refused);
        return new Decision(Verdict.DENY, deciding == null ? "git" : deciding.ruleName(),
                deciding == null ? 0 : deciding.line(), refused, request.tls(), request.normalizedPath());
    }

    private static String gitEntryText(GitRule deciding) {
        return deciding == null ? " (no git entry of this host names it)"
                : " (git entry " + deciding.name() + ", line " + deciding.line() + ": " + deciding.pushText() + ")";
    }

    private static String rulesText(Registry r) {
        List<String> parts = new ArrayList<>();
        if (!r.minReleaseAge().isZero()) {
            parts.add("min_release_age " + r.minReleaseAgeText());
        }
        if (r.advisories().records() > 0) {
            parts.add(r.advisories().records() + " advisory records");
        }
        if (r.installScripts()) {
            parts.add("added install scripts");
        }
        if (r.provenance()) {
            parts.add("dropped provenance");
        }
        return parts.isEmpty() ? "" : " (" + String.join(", ", parts) + ")";
    }

    private static String hostText(String host) {
        try {
            return HostNames.normalize(host);
        } catch (IllegalArgumentException e) {
            return "(invalid: " + e.getMessage() + ")";
        }
    }

    private static String ruleText(Decision d) {
        return d.rule() == null ? "(none)" : d.rule() + " (line " + d.ruleLine() + ")";
    }

    private static Explanation invalid(String why) {
        Decision d = new Decision(Verdict.DENY, null, 0, Reasons.INVALID_URL, TlsMode.INTERCEPT, null);
        return new Explanation(d, null, List.of("decision: deny", "rule: (none)", "reason: " + Reasons.INVALID_URL,
                "error: " + why));
    }
}
