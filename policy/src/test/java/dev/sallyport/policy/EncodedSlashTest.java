package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code allow_encoded_slash} (issue 14 item 2): npm asks for {@code /@scope%2fname}, so a rule may allow an escaped
 * slash, decided on the decoded path. Tried from the attacker's side: {@code %2F} must never carry a path past a
 * rule, neither out of an allowed tree (dot segments that decoding makes, double encoding, empty segments) nor past
 * a deny rule (decoded, or as sent to a backend that keeps {@code %2F} inside its segment), and rules without the
 * option refuse it as before.
 */
class EncodedSlashTest {

    private static final PolicyEngine NPM = engine("""
            rules:
              - name: no-evil-scope
                action: deny
                hosts: [registry.example.com]
                paths: ["/@evil/**"]
              - name: npm-read
                hosts: [registry.example.com]
                methods: [GET, HEAD]
                allow_encoded_slash: true
              - name: plain
                hosts: [plain.example.com]
            """);

    private static final PolicyEngine PUBLIC = engine("""
            rules:
              - name: public
                hosts: [files.example.com]
                paths: ["/public/*", "/public/docs/**"]
                allow_encoded_slash: true
            """);

    private static PolicyEngine engine(String yaml) {
        try {
            return PolicyEngine.compile(PolicyLoader.parse(yaml, "encoded-slash.yaml"));
        } catch (PolicyException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Decision get(PolicyEngine engine, String host, String path) {
        return engine.onRequest(host, 443, "GET", path, null);
    }

    @ParameterizedTest
    @ValueSource(strings = {"/@types%2fnode", "/@types%2Fnode", "/@babel%2fcore?write=true", "/@types%2fnode/-/x.tgz"})
    void npmScopedNamesAreAllowedByARuleThatSaysSo(String path) {
        Decision d = get(NPM, "registry.example.com", path);
        assertThat(d.verdict()).as(path).isEqualTo(Verdict.ALLOW);
        assertThat(d.rule()).isEqualTo("npm-read");
        assertThat(d.normalizedPath()).as("recorded as sent, escape canonical").doesNotContain("?").contains("%2F");
    }

    @Test
    void theRuleDecidesOnTheDecodedPath() {
        PolicyEngine scoped = engine("""
                rules:
                  - name: one-scope
                    hosts: [registry.example.com]
                    paths: ["/@scope/*", "/@other/name"]
                    allow_encoded_slash: true
                """);
        assertThat(get(scoped, "registry.example.com", "/@scope%2fname").verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(get(scoped, "registry.example.com", "/@other%2Fname").verdict()).isEqualTo(Verdict.ALLOW);
        Decision elsewhere = get(scoped, "registry.example.com", "/@another%2fname");
        assertThat(elsewhere.verdict()).isEqualTo(Verdict.DENY);
        assertThat(elsewhere.reason()).isEqualTo(Reasons.PATH_NOT_ALLOWED);
        assertThat(get(scoped, "registry.example.com", "/@scope/name").verdict()).as("the plain spelling too")
                .isEqualTo(Verdict.ALLOW);
    }

    @Test
    void withoutTheOptionAnEncodedSlashIsStillInvalid() {
        Decision plain = get(NPM, "plain.example.com", "/@types%2fnode");
        assertThat(plain.verdict()).isEqualTo(Verdict.DENY);
        assertThat(plain.reason()).isEqualTo(Reasons.INVALID_PATH);
        PolicyEngine none = engine("rules: [{name: all, hosts: [registry.example.com]}]");
        assertThat(get(none, "registry.example.com", "/@types%2fnode").reason()).isEqualTo(Reasons.INVALID_PATH);
        // an allow rule without the option that comes first decides: invalid, not allowed by the later rule
        PolicyEngine first = engine("""
                rules:
                  - {name: strict, hosts: [registry.example.com], paths: ["/@types/*"]}
                  - {name: loose, hosts: [registry.example.com], allow_encoded_slash: true}
                """);
        assertThat(get(first, "registry.example.com", "/@types%2fnode").reason()).isEqualTo(Reasons.INVALID_PATH);
        assertThat(get(first, "registry.example.com", "/@babel%2fcore").rule()).isEqualTo("loose");
    }

    @ParameterizedTest
    @ValueSource(strings = {"/public/..%2f..%2fprivate", "/public%2f../secret", "/public%2F..%2Fsecret",
        "/public/%2e%2e%2fsecret", "/public/x%2f..%2f..%2fsecret", "/public/.%2fsecret", "/public/a%2f%2fb",
        "/public/%2fsecret", "/%2fpublic/x", "/public/%252fsecret", "/public/%25%32%66secret", "/public/%2f.;/x",
        "/public/..;%2fsecret", "/public/x%2f%2e%2e%2f%2e%2e%2fsecret", "/public/a%2f..", "/public/a%2f."})
    void anEncodedSlashNeverCarriesAPathOutOfTheAllowedTree(String path) {
        Decision d = get(PUBLIC, "files.example.com", path);
        assertThat(d.verdict()).as(path).isEqualTo(Verdict.DENY);
        assertThat(d.reason()).as(path).isIn(Reasons.INVALID_PATH, Reasons.PATH_NOT_ALLOWED);
    }

    @Test
    void insideTheTreeItIsAllowedWhereTheDecodedPathMatches() {
        assertThat(get(PUBLIC, "files.example.com", "/public%2fx").verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(get(PUBLIC, "files.example.com", "/public/docs%2fa%2fb").verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(get(PUBLIC, "files.example.com", "/public/a%2fb").reason()).as("two segments under /public/*")
                .isEqualTo(Reasons.PATH_NOT_ALLOWED);
    }

    @Test
    void aDenyRuleIsNotEvadedDecodedOrAsSent() {
        for (String path : List.of("/@evil%2fpkg", "/@evil%2Fpkg", "/@evil%2F%2e/x",
                "/@evil%2fpkg/-/pkg-1.0.0.tgz")) {
            Decision d = get(NPM, "registry.example.com", path);
            assertThat(d.verdict()).as(path).isEqualTo(Verdict.DENY);
        }
        assertThat(get(NPM, "registry.example.com", "/@evil%2fpkg").rule()).isEqualTo("no-evil-scope");
        // a deny rule written for the segment as a backend that keeps %2F reads it ("/*" = one root segment)
        PolicyEngine asSent = engine("""
                rules:
                  - {name: no-root-files, action: deny, hosts: [files.example.com], paths: ["/*"]}
                  - {name: all, hosts: [files.example.com], allow_encoded_slash: true}
                  - {name: after, action: deny, hosts: [files.example.com], paths: ["/**"]}
                """);
        Decision kept = get(asSent, "files.example.com", "/a%2fsecret");
        assertThat(kept.verdict()).isEqualTo(Verdict.DENY);
        assertThat(kept.rule()).isEqualTo("no-root-files");
        assertThat(get(asSent, "files.example.com", "/a/secret").verdict()).as("a deny rule after the allowing one"
                + " does not count").isEqualTo(Verdict.ALLOW);
        assertThat(get(asSent, "files.example.com", "/dir/a%2fb").verdict()).isEqualTo(Verdict.ALLOW);
    }

    @Test
    void parametersAndEscapedQueriesAreReadEveryWayWithEncodedSlashesToo() {
        PolicyEngine engine = engine("""
                rules:
                  - {name: no-secret, action: deny, hosts: [files.example.com], paths: ["/public/secret/**"]}
                  - {name: public, hosts: [files.example.com], paths: ["/public/**"], allow_encoded_slash: true}
                """);
        for (String path : List.of("/public%2fsecret;x/y", "/public%2fsecret%3f/../y", "/public/secret;x%2fy",
                "/public%2fsecret%23x")) {
            assertThat(get(engine, "files.example.com", path).verdict()).as(path).isEqualTo(Verdict.DENY);
        }
        assertThat(get(engine, "files.example.com", "/public%2fother;v=2").verdict()).isEqualTo(Verdict.ALLOW);
    }

    @Test
    void inAuditModeAnInvalidPathStaysDenied() {
        PolicyEngine audit = engine("""
                mode: audit
                rules:
                  - {name: all, hosts: [files.example.com], allow_encoded_slash: true}
                """);
        assertThat(get(audit, "files.example.com", "/a/..%2f..%2fetc").verdict()).isEqualTo(Verdict.DENY);
        assertThat(get(audit, "files.example.com", "/a%2fb").verdict()).isEqualTo(Verdict.ALLOW);
    }

    /**
     * Differential, with the most lenient backend of {@link PathNormalizerDifferentialTest} (it decodes {@code %2F}
     * as a separator, again and again): under a rule with {@code allow_encoded_slash}, whatever the engine allows,
     * that backend reads inside {@code /public/}; and the spellings of a slash that only climb are refused.
     */
    @Test
    void nothingAllowedWithEncodedSlashesIsReadOutsideThePublicTree() {
        PolicyEngine engine = engine("""
                rules:
                  - {name: public, hosts: [files.example.com], ports: [80], paths: ["/public/**"], allow_encoded_slash: true}
                """);
        List<String> raws = new ArrayList<>();
        List<String> dots = PathNormalizerDifferentialTest.DOT;
        List<String> slashes = PathNormalizerDifferentialTest.SLASH;
        for (String d1 : dots) {
            for (String d2 : dots) {
                for (String s : slashes) {
                    raws.add("/public/" + d1 + d2 + s + "private/x");
                    raws.add("/public%2f" + d1 + d2 + s + "private");
                    raws.add("/public/a" + s + d1 + d2 + "%2f" + d1 + d2 + "%2fprivate/x");
                }
            }
        }
        Random random = new Random(14);
        for (int i = 0; i < 20_000; i++) {
            StringBuilder sb = new StringBuilder(random.nextBoolean() ? "/public" : "/public/a");
            for (int n = 1 + random.nextInt(4); n > 0; n--) {
                sb.append(random.nextBoolean() ? "%2f" : slashes.get(random.nextInt(slashes.size())));
                sb.append(random.nextInt(3) == 0 ? "x" : dots.get(random.nextInt(dots.size()))
                        + (random.nextBoolean() ? dots.get(random.nextInt(dots.size())) : ""));
            }
            sb.append(random.nextBoolean() ? "%2fprivate" : "/private");
            raws.add(sb.toString());
        }
        int outside = 0;
        int allowed = 0;
        for (String raw : raws) {
            String read = PathNormalizerDifferentialTest.LenientBackend.read(raw);
            boolean inPublic = read.equals("/public") || read.startsWith("/public/");
            outside += inPublic ? 0 : 1;
            if (engine.onRequest("files.example.com", 80, "GET", raw, null).verdict() == Verdict.ALLOW) {
                allowed++;
                assertThat(inPublic).as("engine allowed %s, a lenient backend reads %s", raw, read).isTrue();
            }
        }
        assertThat(outside).as("spellings a lenient backend reads outside /public").isGreaterThan(10_000);
        assertThat(allowed).as("spellings with an encoded slash the engine allows").isGreaterThan(100);
    }
}
