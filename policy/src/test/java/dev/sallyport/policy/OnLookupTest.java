package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OnLookupTest {

    private static PolicyEngine engine(String yaml) throws PolicyException {
        return PolicyEngine.compile(PolicyLoader.parse(yaml, "t.yaml"));
    }

    private static final String RULES = """
            rules:
              - name: block-uploads
                action: deny
                hosts: [upload.allowed.test]
              - name: api
                hosts: [api.allowed.test]
                ports: [8443]
                methods: [GET]
              - name: zone
                hosts: ["*.zone.test"]
              - name: db
                cidrs: [10.20.0.0/16]
                ports: [5432]
            """;

    @ParameterizedTest
    @ValueSource(strings = {"api.allowed.test", "API.Allowed.Test.", "a.zone.test", "x.y.zone.test"})
    void aNameSomeRuleCanAllowOnSomePortIsAllowed(String name) throws PolicyException {
        Decision d = engine(RULES).onLookup(name, null);
        assertThat(d.verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(d.rule()).isIn("api", "zone");
    }

    @ParameterizedTest
    @ValueSource(strings = {"upload.allowed.test", "zone.test", "evilzone.test", "allowed.test", "zone.test.evil.example"})
    void aNameNoRuleCanAllowIsDenied(String name) throws PolicyException {
        assertThat(engine(RULES).onLookup(name, null).verdict()).isEqualTo(Verdict.DENY);
    }

    @ParameterizedTest
    @ValueSource(strings = {"10.20.0.1", "127.0.0.1", "[::1]", "bad..name", ""})
    void ipLiteralsAndInvalidNamesAreInvalidHost(String name) throws PolicyException {
        Decision d = engine(RULES).onLookup(name, null);
        assertThat(d.verdict()).isEqualTo(Verdict.DENY);
        assertThat(d.reason()).isEqualTo(Reasons.INVALID_HOST);
    }

    @Test
    void auditModeLetsTheLookupThroughAsWouldDeny() throws PolicyException {
        Decision d = engine("mode: audit\n" + RULES).onLookup("other.test", null);
        assertThat(d.verdict()).isEqualTo(Verdict.WOULD_DENY);
        assertThat(d.reason()).isEqualTo(Reasons.NO_MATCHING_RULE);
    }

    @Test
    void aPolicyWithoutRulesAllowsNoName() {
        Decision d = PolicyEngine.compile(Policy.defaults()).onLookup("example.com", null);
        assertThat(d.verdict()).isEqualTo(Verdict.DENY);
        assertThat(d.reason()).isEqualTo(Reasons.NO_MATCHING_RULE);
    }
}
