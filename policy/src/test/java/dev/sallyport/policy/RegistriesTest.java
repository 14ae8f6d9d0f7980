package dev.sallyport.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code registries:} section: loading, one-line errors, the conflict with plain rules, and the verdicts. */
class RegistriesTest {

    @TempDir
    Path dir;

    private static final String OSV = """
            {"id": "MAL-2026-1", "summary": "malicious code", "affected": [
              {"package": {"ecosystem": "npm", "name": "evil-pkg"}, "versions": ["1.0.1"]},
              {"package": {"ecosystem": "npm", "name": "all-bad"},
               "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}]}]},
              {"package": {"ecosystem": "PyPI", "name": "Bad_Lib"},
               "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "2.0"}, {"fixed": "2.2"}]}]},
              {"package": {"ecosystem": "crates.io", "name": "other"}, "versions": ["1.0.0"]}]}
            """;

    private Policy load(String yaml) throws IOException, PolicyException {
        Path file = dir.resolve("policy.yaml");
        Files.writeString(file, yaml);
        return PolicyLoader.load(file);
    }

    @Test
    void loadsEveryKeyAndDecides() throws Exception {
        Files.createDirectories(dir.resolve("osv/npm"));
        Files.writeString(dir.resolve("osv/npm/MAL-2026-1.json"), OSV);
        Policy p = load("""
                registries:
                  - name: npm
                    ecosystem: npm
                    hosts: [Registry.Example.com]     # a placeholder
                    file_hosts: [files.example.com]
                    ports: [443, 8443]
                    min_release_age: 7d
                    advisories: osv
                    allow: ["*"]
                    deny: ["@evil/*", "left-pad@<1.3.0"]
                    refuse_added_install_scripts: true
                    refuse_dropped_provenance: true
                    exceptions: [esbuild]
                  - name: pypi
                    ecosystem: pypi
                    hosts: [pypi.example.com]
                    advisories: osv
                    allow: ["requests@>=2.0,<3", "bad-lib"]
                rules:
                  - name: other
                    hosts: [api.example.com]
                """);
        assertThat(p.registries()).hasSize(2);
        Registry npm = p.registries().getFirst();
        assertThat(npm.hosts()).containsExactly("registry.example.com");
        assertThat(npm.minReleaseAge()).isEqualTo(Duration.ofDays(7));
        assertThat(npm.advisories().records()).isEqualTo(1);
        assertThat(npm.packageRefusal("@evil/x")).isEqualTo(RegistryReasons.PACKAGE_NOT_ALLOWED);
        assertThat(npm.packageRefusal("left-pad")).isNull();
        assertThat(npm.versionRefusal("left-pad", "1.2.9")).isEqualTo(RegistryReasons.VERSION_NOT_ALLOWED);
        assertThat(npm.versionRefusal("left-pad", "1.3.0")).isNull();
        assertThat(npm.versionRefusal("evil-pkg", "1.0.1")).isEqualTo(RegistryReasons.KNOWN_MALICIOUS);
        assertThat(npm.versionRefusal("evil-pkg", "1.0.0")).isNull();
        assertThat(npm.versionRefusal("all-bad", "0.0.1")).isEqualTo(RegistryReasons.KNOWN_MALICIOUS);
        assertThat(npm.excepted("esbuild")).isTrue();
        Instant now = Instant.parse("2026-12-01T12:00:00Z");
        assertThat(npm.ageRefusal(now.minus(Duration.ofHours(1)), now)).isEqualTo(RegistryReasons.RELEASE_TOO_NEW);
        assertThat(npm.ageRefusal(now.minus(Duration.ofDays(30)), now)).isNull();
        assertThat(npm.ageRefusal(null, now)).isEqualTo(RegistryReasons.RELEASE_TIME_UNKNOWN);

        Registry pypi = p.registries().get(1);
        assertThat(pypi.versionRefusal("Requests", "2.31.0")).isNull();
        assertThat(pypi.versionRefusal("requests", "3.0")).isEqualTo(RegistryReasons.VERSION_NOT_ALLOWED);
        assertThat(pypi.packageRefusal("flask")).isEqualTo(RegistryReasons.PACKAGE_NOT_ALLOWED);
        assertThat(pypi.versionRefusal("bad.lib", "2.1")).isEqualTo(RegistryReasons.KNOWN_MALICIOUS);
        assertThat(pypi.versionRefusal("bad-lib", "2.2")).isNull();
        assertThat(pypi.versionRefusal("bad-lib", "1.9")).isNull();

        PolicyEngine engine = PolicyEngine.compile(p);
        assertThat(engine.registry("files.example.com", 8443)).isSameAs(npm);
        assertThat(engine.registry("files.example.com", 80)).isNull();
        Decision get = engine.onRequest("registry.example.com", 443, "GET", "/@acme%2ftool", null);
        assertThat(get.verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(get.rule()).isEqualTo("registry:npm");
        assertThat(engine.onRequest("registry.example.com", 443, "PUT", "/x", null).verdict())
                .isEqualTo(Verdict.DENY);
        assertThat(engine.onConnect("pypi.example.com", 443, null).verdict()).isEqualTo(Verdict.ALLOW);

        Explain.Explanation bad = Explain.explain(engine, "https://files.example.com/evil-pkg/-/evil-pkg-1.0.1.tgz",
                "GET", null);
        assertThat(bad.decision().verdict()).isEqualTo(Verdict.DENY);
        assertThat(bad.text()).startsWith("decision: deny\nrule: registry:npm (line 2)\nreason: known_malicious\n")
                .contains("registry: npm (npm, line 2)\npackage: evil-pkg version 1.0.1 (a file)\nrefused:"
                        + " known_malicious");
        Explain.Explanation ok = Explain.explain(engine, "https://registry.example.com/@acme%2ftool", "GET", null);
        assertThat(ok.decision().verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(ok.text()).contains("package: @acme/tool (its package document)").contains("filtered: the versions"
                + " the registry's rules refuse are left out (min_release_age 7d, 1 advisory records, added install"
                + " scripts, dropped provenance)");
        assertThat(Explain.explain(engine, "https://registry.example.com/@evil%2fx", "GET", null).text())
                .contains("refused: package_not_allowed");
        assertThat(Explain.explain(engine, "https://registry.example.com/left-pad/-/other-name.tgz", "GET", null)
                .text()).startsWith("decision: deny").contains("refused: version_unknown");
        assertThat(Explain.explain(engine, "https://registry.example.com/left-pad/", "GET", null).text())
                .contains("package: left-pad (its package document)");
        assertThat(Explain.explain(engine, "https://pypi.example.com/packages/ab/flask-3.0-py3-none-any.whl", "GET",
                null).text()).contains("package: flask version 3.0 (a file)").contains("refused: package_not_allowed");
    }

    @Test
    void aPlainRuleThatReachesARegistryHostIsAConflict() {
        PolicyException e = catchThrowableOfType(PolicyException.class, () -> load("""
                registries:
                  - name: npm
                    ecosystem: npm
                    hosts: [registry.example.com]
                rules:
                  - name: too-wide
                    hosts: ["*.example.com"]
                  - name: denied-is-fine
                    action: deny
                    hosts: [registry.example.com]
                  - name: other-port-is-fine
                    hosts: [registry.example.com]
                    ports: [8080]
                """));
        assertThat(e.problems()).extracting(PolicyProblem::toString).containsExactly(dir.resolve("policy.yaml") + ":7:12:"
                + " rules[0].hosts: rule 'too-wide' reaches 'registry.example.com', a host of registry 'npm', around"
                + " its filter (expected: registry hosts only in registries (remove the host from the rule, or narrow"
                + " its pattern or ports))");
    }

    @Test
    void everyMistakeIsOneLine() throws IOException {
        Files.createDirectories(dir.resolve("broken"));
        Files.writeString(dir.resolve("broken/x.json"), "{\"id\": ");
        PolicyException e = catchThrowableOfType(PolicyException.class, () -> load("""
                registries:
                  - name: a
                    ecosystem: cargo
                    hosts: ["*.example.com"]
                  - name: b
                    ecosystem: pypi
                    hosts: [pypi.example.com]
                    min_release_age: soon
                    deny: ["bad pkg"]
                    refuse_added_install_scripts: true
                    advisories: broken
                  - name: c
                    ecosystem: npm
                    hosts: [pypi.example.com]
                    bogus: 1
                """));
        List<String> lines = e.problems().stream().map(PolicyProblem::toString).toList();
        assertThat(lines).allSatisfy(l -> assertThat(l).doesNotContain("\n").contains("(expected: "));
        assertThat(String.join("\n", lines))
                .contains("policy.yaml:3:16: registries[0].ecosystem: 'cargo' is not an ecosystem (expected: npm or pypi)")
                .contains("registries[0].hosts[0]: '*.example.com' is a wildcard")
                .contains("registries[1].min_release_age: 'soon' is not a valid duration")
                .contains("registries[1].deny[0]: 'bad pkg' is not a package rule")
                .contains("registries[1].refuse_added_install_scripts: is an npm check")
                .contains("registries[1].advisories: " + dir.resolve("broken/x.json"))
                .contains("registries[2].bogus: unknown key 'bogus'");
    }

    @Test
    void theAdvisoriesFolderIsReadAgainWithThePolicy() throws Exception {
        Files.createDirectories(dir.resolve("osv"));
        String yaml = "registries:\n  - name: npm\n    ecosystem: npm\n    hosts: [registry.example.com]\n"
                + "    advisories: osv\n";
        assertThat(load(yaml).registries().getFirst().versionRefusal("evil-pkg", "1.0.1")).isNull();
        Files.writeString(dir.resolve("osv/MAL-2026-1.json"), OSV);          // the user synced the folder
        assertThat(load(yaml).registries().getFirst().versionRefusal("evil-pkg", "1.0.1"))
                .isEqualTo(RegistryReasons.KNOWN_MALICIOUS);
    }

    @Test
    void versionsOrderAsTheirEcosystemsSay() {
        assertThat(Ecosystem.NPM.compare("1.0.0-rc.1", "1.0.0")).isNegative();
        assertThat(Ecosystem.NPM.compare("1.10.0", "1.9.0")).isPositive();
        assertThat(Ecosystem.NPM.compare("1.0.0-alpha.2", "1.0.0-alpha.10")).isNegative();
        assertThat(Ecosystem.PYPI.compare("1.0rc1", "1.0")).isNegative();
        assertThat(Ecosystem.PYPI.compare("1.0.post1", "1.0")).isPositive();
        assertThat(Ecosystem.PYPI.compare("1.0.dev1", "1.0a1")).isNegative();
        assertThat(Ecosystem.PYPI.compare("2.10", "2.9")).isPositive();
        assertThat(Ecosystem.PYPI.normalize("Foo_Bar.baz")).isEqualTo("foo-bar-baz");
    }
}
