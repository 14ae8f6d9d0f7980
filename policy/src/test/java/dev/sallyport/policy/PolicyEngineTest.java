package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class PolicyEngineTest {

    private static final String POLICY = """
            rules:
              - name: npm-read
                hosts: [registry.example.com]
                methods: [GET, HEAD]
              - name: github-api
                hosts: [api.github.example]
                paths: ["/repos/acme/**"]
              - name: no-uploads
                action: deny
                hosts: ["*.s3.example.com"]
                methods: [PUT, POST]
              - name: s3
                hosts: ["*.s3.example.com"]
              - name: allowed
                hosts: [allowed.com, "*.bücher.example"]
                ports: [443, 80]
              - name: internal-db
                cidrs: [10.20.0.0/16]
                ports: [5432]
                tls: passthrough
              - name: v6-net
                cidrs: ["2001:db8::/32"]
              - name: literal
                hosts: [203.0.113.7]
            """;

    private static PolicyEngine engine(String yaml) throws PolicyException {
        return PolicyEngine.compile(PolicyLoader.parse(yaml, "test.yaml"));
    }

    private static Decision request(String host, String method, String path) throws PolicyException {
        return engine(POLICY).onRequest(host, 443, method, path, null);
    }

    @ParameterizedTest(name = "{0} {1} {2} -> {3} {4} {5}")
    @CsvSource({
        "registry.example.com, GET, /pkg, allow, npm-read, allowed_by_rule",
        "REGISTRY.Example.com., HEAD, /pkg, allow, npm-read, allowed_by_rule",
        "registry.example.com, PUT, /pkg, deny, , method_not_allowed",
        "api.github.example, POST, /repos/acme/x/issues, allow, github-api, allowed_by_rule",
        "api.github.example, GET, /repos/other/x, deny, , path_not_allowed",
        "api.github.example, GET, /repos/acme/../other/x, deny, , path_not_allowed",
        "api.github.example, GET, /repos/acme/%2e%2e/other, deny, , path_not_allowed",
        "api.github.example, GET, /repos/%61cme/x, allow, github-api, allowed_by_rule",
        "api.github.example, GET, /repos//acme/x?q=/other, allow, github-api, allowed_by_rule",
        "api.github.example, GET, /repos/acme%2F..%2Fother, deny, , invalid_path",
        "api.github.example, GET, /repos/acme/..%5Cother, deny, , invalid_path",
        "bucket.s3.example.com, PUT, /k, deny, no-uploads, denied_by_rule",
        "a.b.bucket.s3.example.com, POST, /k, deny, no-uploads, denied_by_rule",
        "bucket.s3.example.com, GET, /k, allow, s3, allowed_by_rule",
        "s3.example.com, GET, /k, deny, , no_matching_rule",
        "allowed.com, GET, /, allow, allowed, allowed_by_rule",
        "allowed.com., GET, /, allow, allowed, allowed_by_rule",
        "ALLOWED.COM, GET, /, allow, allowed, allowed_by_rule",
        "allowed.com.evil.net, GET, /, deny, , no_matching_rule",
        "evilallowed.com, GET, /, deny, , no_matching_rule",
        "allowed.com@evil.net, GET, /, deny, , invalid_host",
        "evil.net@allowed.com, GET, /, deny, , invalid_host",
        "allowed%2ecom, GET, /, deny, , invalid_host",
        "allowed.com%00.evil.net, GET, /, deny, , invalid_host",
        "www.bücher.example, GET, /, allow, allowed, allowed_by_rule",
        "\u0430llowed.com, GET, /, deny, , no_matching_rule",
        "www.xn--bcher-kva.example, GET, /, allow, allowed, allowed_by_rule",
        "203.0.113.7, GET, /, allow, literal, allowed_by_rule",
        "10.20.3.4, GET, /, deny, , port_not_allowed",
        "[2001:db8::5], GET, /, allow, v6-net, allowed_by_rule",
        "2001:DB8:0::5, GET, /, allow, v6-net, allowed_by_rule",
        "[2001:db8::5%eth0], GET, /, deny, , invalid_host",
        "registry.example.com, get, /pkg, deny, , invalid_method",
        "registry.example.com, G ET, /pkg, deny, , invalid_method",
    })
    void requestsAreDecidedOnNormalizedNamesAndPaths(String host, String method, String path, String verdict,
                                                      String rule, String reason) throws PolicyException {
        Decision d = request(host, method, path);
        assertThat(d.verdict().code()).as("verdict").isEqualTo(verdict);
        assertThat(d.rule()).as("rule").isEqualTo(rule);
        assertThat(d.reason()).as("reason").isEqualTo(reason);
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.1", "2130706433", "0x7f.1", "0x7f000001", "0177.0.0.1", "127.0.0.01", "017700000001",
        "0x7f.0x0.0x0.0x1", "203.0.113.07", "203.0.0113.7", "3405803783", "::ffff:203.0.113.7%1", "1.2.3.4.5"})
    void nonCanonicalNumericHostsAreInvalidNeverNames(String host) throws PolicyException {
        // a rule allowing every name under the numeric-looking suffix must not help
        PolicyEngine e = engine("""
                rules:
                  - name: everything
                    hosts: ["*.0.1", "*.0.0.1", "203.0.113.7", "127.0.0.1"]
                """.replace("\"*.0.1\", \"*.0.0.1\", ", ""));
        assertThat(e.onRequest(host, 443, "GET", "/", null).reason()).isEqualTo(Reasons.INVALID_HOST);
        assertThat(e.onConnect(host, 443, null).reason()).isEqualTo(Reasons.INVALID_HOST);
    }

    @Test
    void firstMatchingRuleWins() throws PolicyException {
        PolicyEngine e = engine("""
                rules:
                  - name: deny-one
                    action: deny
                    hosts: [a.example.com]
                  - name: allow-all
                    hosts: ["*.example.com", a.example.com]
                  - name: later-exact
                    hosts: [b.example.com]
                """);
        assertThat(e.onRequest("a.example.com", 443, "GET", "/", null).rule()).isEqualTo("deny-one");
        assertThat(e.onRequest("a.example.com", 443, "GET", "/", null).verdict()).isEqualTo(Verdict.DENY);
        assertThat(e.onRequest("b.example.com", 443, "GET", "/", null).rule()).isEqualTo("allow-all");
        assertThat(e.onRequest("b.example.com", 443, "GET", "/", null).ruleLine()).isEqualTo(5);
        assertThat(e.onRequest("x.y.example.com", 443, "GET", "/", null).rule()).isEqualTo("allow-all");
    }

    @Test
    void connectOpensForRestrictedAllowRulesAndSkipsRestrictedDenyRules() throws PolicyException {
        PolicyEngine e = engine(POLICY);
        Decision npm = e.onConnect("registry.example.com", 443, null);
        assertThat(npm.verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(npm.rule()).isEqualTo("npm-read");
        Decision s3 = e.onConnect("bucket.s3.example.com", 443, null);
        assertThat(s3.verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(s3.rule()).isEqualTo("s3");
        assertThat(e.onConnect("registry.example.com", 8443, null).reason()).isEqualTo(Reasons.PORT_NOT_ALLOWED);
        assertThat(e.onConnect("unknown.example", 443, null).reason()).isEqualTo(Reasons.NO_MATCHING_RULE);
        Decision db = e.onConnect("10.20.0.9", 5432, null);
        assertThat(db.verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(db.tls()).isEqualTo(TlsMode.PASSTHROUGH);
        assertThat(e.onConnect("db.internal", 5432, null).verdict()).isEqualTo(Verdict.DENY);
        assertThat(e.onConnect("10.21.0.9", 5432, null).verdict()).isEqualTo(Verdict.DENY);
    }

    @Test
    void unrestrictedDenyDecidesAtConnect() throws PolicyException {
        PolicyEngine e = engine("""
                rules:
                  - name: block
                    action: deny
                    hosts: [blocked.example]
                  - name: all
                    hosts: ["*.corp.example", blocked.example]
                """);
        Decision d = e.onConnect("blocked.example", 443, null);
        assertThat(d.verdict()).isEqualTo(Verdict.DENY);
        assertThat(d.rule()).isEqualTo("block");
        assertThat(d.reason()).isEqualTo(Reasons.DENIED);
    }

    @Test
    void passthroughAfterASkippedRestrictedDenyIsInterceptedSoTheDenyStillApplies() throws PolicyException {
        PolicyEngine e = engine("""
                rules:
                  - name: no-put
                    action: deny
                    hosts: [pinned.example]
                    methods: [PUT]
                  - name: pinned
                    hosts: [pinned.example]
                    tls: passthrough
                  - name: other
                    hosts: [other.example]
                    tls: passthrough
                """);
        Decision c = e.onConnect("pinned.example", 443, null);
        assertThat(c.verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(c.tls()).isEqualTo(TlsMode.INTERCEPT);
        assertThat(e.onRequest("pinned.example", 443, "PUT", "/", null).rule()).isEqualTo("no-put");
        assertThat(e.onConnect("other.example", 443, null).tls()).isEqualTo(TlsMode.PASSTHROUGH);
    }

    @Test
    void clientsRestrictRulesBuiltInCode() {
        // A policy file cannot say clients: yet (PolicyLoaderTest); the matching stays for per-sandbox identities.
        Rule ciOnly = new Rule("ci-only", 0, Action.ALLOW, List.of(HostPattern.parse("deploy.example")), List.of(),
                Rule.DEFAULT_PORTS, Set.of(), List.of(), TlsMode.INTERCEPT, Set.of("ci-runner"));
        Policy d = Policy.defaults();
        PolicyEngine e = PolicyEngine.compile(new Policy(d.proxy(), d.ca(), d.audit(), d.mode(), d.upstream(),
                d.network(), List.of(ciOnly), List.of(), null));
        assertThat(e.onConnect("deploy.example", 443, "ci-runner").verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(e.onConnect("deploy.example", 443, "laptop").reason()).isEqualTo(Reasons.CLIENT_NOT_ALLOWED);
        assertThat(e.onConnect("deploy.example", 443, null).verdict()).isEqualTo(Verdict.DENY);
        assertThat(e.onRequest("deploy.example", 443, "GET", "/", "laptop").verdict()).isEqualTo(Verdict.DENY);
        assertThat(e.onRequest("deploy.example", 443, "GET", "/", "ci-runner").verdict()).isEqualTo(Verdict.ALLOW);
    }

    @Test
    void auditModeTurnsRuleDeniesIntoWouldDenyButNotInvalidInputOrPrivateAddresses() throws PolicyException {
        PolicyEngine e = engine("mode: audit\n" + POLICY);
        Decision miss = e.onRequest("unknown.example", 443, "GET", "/", null);
        assertThat(miss.verdict()).isEqualTo(Verdict.WOULD_DENY);
        assertThat(miss.reason()).isEqualTo(Reasons.NO_MATCHING_RULE);
        assertThat(miss.permitsTraffic()).isTrue();
        Decision denied = e.onRequest("b.s3.example.com", 443, "PUT", "/", null);
        assertThat(denied.verdict()).isEqualTo(Verdict.WOULD_DENY);
        assertThat(denied.rule()).isEqualTo("no-uploads");
        assertThat(denied.reason()).isEqualTo(Reasons.DENIED);
        assertThat(e.onConnect("unknown.example", 443, null).verdict()).isEqualTo(Verdict.WOULD_DENY);
        assertThat(e.onRequest("127.1", 443, "GET", "/", null).verdict()).isEqualTo(Verdict.DENY);
        assertThat(e.onRequest("allowed.com", 443, "GET", "/%2F", null).verdict()).isEqualTo(Verdict.DENY);
        assertThat(e.onDial("x", 443, IpAddress.parseStrict("169.254.169.254").orElseThrow()).verdict())
                .isEqualTo(Verdict.DENY);
        assertThat(e.onRequest("allowed.com", 443, "GET", "/", null).verdict()).isEqualTo(Verdict.ALLOW);
    }

    @Test
    void emptyPolicyDeniesEverything() throws PolicyException {
        PolicyEngine e = PolicyEngine.compile(Policy.defaults());
        assertThat(e.onConnect("example.com", 443, null).reason()).isEqualTo(Reasons.NO_MATCHING_RULE);
        assertThat(e.onRequest("example.com", 80, "GET", "/", null).verdict()).isEqualTo(Verdict.DENY);
    }

    @Test
    void normalizedPathIsReported() throws PolicyException {
        Decision d = request("api.github.example", "GET", "/repos/./acme//%78?token=1");
        assertThat(d.normalizedPath()).isEqualTo("/repos/acme/x");
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, 65536})
    void invalidPortsAreDenied(int port) throws PolicyException {
        assertThat(engine(POLICY).onConnect("allowed.com", port, null).reason()).isEqualTo(Reasons.INVALID_PORT);
    }
}
