package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ExplainTest {

    private static final PolicyEngine ENGINE;

    static {
        try {
            ENGINE = PolicyEngine.compile(PolicyLoader.parse(PolicyLoaderTest.CONTRACT_EXAMPLE, "policy.yaml"));
        } catch (PolicyException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void explainsADenyByRuleWithItsLineAndTheConnectStage() {
        Explain.Explanation x = Explain.explain(ENGINE, URI.create("https://bucket.s3.example.com/k?x=1"), "PUT", null);
        // the CONNECT is refused first (no allow rule names the host), so it is the decision shown
        assertThat(x.lines()).containsSubsequence(
                "decision: deny",
                "rule: (none)",
                "reason: no_matching_rule",
                "host: bucket.s3.example.com:443",
                "method: PUT",
                "path: /k",
                "request: deny (rule: no-uploads (line 20), reason: denied_by_rule)");
        assertThat(x.connect()).isNotNull();
        assertThat(x.connect().verdict()).isEqualTo(Verdict.DENY); // no allow rule names the host
        assertThat(x.text()).contains("connect: deny (rule: (none), reason: no_matching_rule, tls: intercept)");
    }

    @Test
    void explainsAnAllow() {
        Explain.Explanation x = Explain.explain(ENGINE, "https://API.github.example./repos/acme/x/../y", "GET", "ci");
        assertThat(x.decision().verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(x.lines()).contains("decision: allow", "rule: github-api (line 17)", "path: /repos/acme/y",
                "host: api.github.example:443", "client: ci");
        Explain.Explanation other = Explain.explain(ENGINE, "https://api.github.example/repos/evil/x", "GET", null);
        assertThat(other.lines()).contains("decision: deny", "reason: path_not_allowed");
        assertThat(other.connect().verdict()).isEqualTo(Verdict.ALLOW);
    }

    @Test
    void plainHttpHasNoConnectStage() {
        Explain.Explanation x = Explain.explain(ENGINE, "http://registry.example.com/pkg", "GET", null);
        assertThat(x.connect()).isNull();
        assertThat(x.lines()).contains("reason: port_not_allowed", "host: registry.example.com:80");
    }

    @ParameterizedTest
    @ValueSource(strings = {"https://allowed.com@evil.net/", "https://registry.example.com:x@evil.net/",
        "https://user:pass@registry.example.com/"})
    void refusesUserinfo(String url) {
        Explain.Explanation x = Explain.explain(ENGINE, url, "GET", null);
        assertThat(x.decision().reason()).isEqualTo(Reasons.INVALID_URL);
        assertThat(x.text()).contains("userinfo");
    }

    @ParameterizedTest
    @ValueSource(strings = {"ftp://registry.example.com/", "registry.example.com/x", "https:///x", "https://a b/",
        "https://registry.example.com:0/", "https://registry.example.com:99999/"})
    void refusesOtherUnusableUrls(String url) {
        assertThat(Explain.explain(ENGINE, url, "GET", null).decision().reason()).isEqualTo(Reasons.INVALID_URL);
    }

    @Test
    void numericTricksAreInvalidHosts() {
        Explain.Explanation x = Explain.explain(ENGINE, "http://0x7f.1/", "GET", null);
        assertThat(x.lines()).contains("reason: invalid_host");
    }
}
