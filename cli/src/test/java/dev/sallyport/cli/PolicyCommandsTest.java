package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PolicyCommandsTest {

    @TempDir
    Path dir;

    private Path write(String name, String yaml) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, yaml);
        return file;
    }

    @Test
    void checkReportsEveryProblemWithLineAndColumnAndExits2() throws IOException {
        Path file = write("bad.yaml", """
                proxy:
                  listen: 127.0.0.1:3128
                  bogus: 1
                mode: enforc
                rules:
                  - name: a
                    hosts: ["*.com"]
                  - name: b
                    hosts: [x.example.com]
                    hosts: [y.example.com]
                    methods: [get]
                """);
        CliRun run = CliRun.of("policy", "check", file.toString());
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err().lines().toList()).containsSubsequence(
                file + ":3:3: proxy.bogus: unknown key 'bogus' (expected: one of admin, admin_token, dns, http2, limits, listen, metrics_identities, timeouts, transparent)",
                file + ":4:7: mode: 'enforc' is not a mode (expected: enforce or audit)");
        assertThat(run.err()).contains(file + ":7:13: rules[0].hosts[0]: '*.com'")
                .contains(file + ":10:5: rules[1].hosts: duplicate key 'hosts'")
                .contains(file + ":11:15: rules[1].methods[0]: 'get'")
                .contains(file + ": 5 problems");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void explainAnswersForOneClientIdentity() throws IOException {
        Path file = write("clients.yaml", """
                rules:
                  - name: ci-deploy
                    hosts: [deploy.example.com]
                    clients: [ci-runner]
                """);
        assertThat(CliRun.of("policy", "check", file.toString()).exit()).isZero();
        CliRun ci = CliRun.of("policy", "explain", file.toString(), "--url", "https://deploy.example.com/",
                "--client", "ci-runner");
        assertThat(ci.exit()).isZero();
        assertThat(ci.out()).contains("client: ci-runner").contains("ci-deploy").containsIgnoringCase("allow");
        CliRun anonymous = CliRun.of("policy", "explain", file.toString(), "--url", "https://deploy.example.com/");
        assertThat(anonymous.exit()).isZero();
        assertThat(anonymous.out()).contains("client_not_allowed");
        CliRun bad = CliRun.of("policy", "explain", file.toString(), "--url", "https://deploy.example.com/",
                "--client", "no spaces");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains("--client: 'no spaces'").hasLineCount(1);
    }

    @Test
    void checkAcceptsValidFile() throws IOException {
        Path file = write("good.yaml", """
                rules:
                  - name: api
                    hosts: [api.example.com]
                """);
        CliRun run = CliRun.of("policy", "check", file.toString());
        assertThat(run.exit()).isZero();
        assertThat(run.out()).contains("valid (1 rules, 0 secrets, mode enforce)");
    }

    @Test
    void checkOfMissingFileIsAConfigurationError() {
        CliRun run = CliRun.of("policy", "check", dir.resolve("nope.yaml").toString());
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains("nope.yaml").hasLineCount(2);
    }

    @Test
    void explainNamesRuleAndLineForAllowAndDeny() throws IOException {
        Path file = write("p.yaml", """
                rules:
                  - name: api
                    hosts: [api.example.com]
                    paths: ["/repos/acme/**"]
                  - name: no-uploads
                    action: deny
                    hosts: ["*.s3.example.com"]
                    methods: [PUT, POST]
                """);
        CliRun allowed = CliRun.of("policy", "explain", file.toString(), "--url", "https://API.example.com./repos/acme/x/../y");
        assertThat(allowed.exit()).isZero();
        assertThat(allowed.out()).contains("decision: allow", "rule: api (line 2)", "path: /repos/acme/y");

        CliRun denied = CliRun.of("policy", "explain", file.toString(), "--url", "https://b.s3.example.com/k", "--method", "PUT");
        assertThat(denied.exit()).isZero();
        assertThat(denied.out()).contains("decision: deny", "rule: no-uploads (line 5)", "reason: denied_by_rule");

        CliRun escaped = CliRun.of("policy", "explain", file.toString(), "--url", "https://api.example.com/repos/acme/%2e%2e/other");
        assertThat(escaped.out()).contains("decision: deny", "request: deny (rule: (none)");

        CliRun unmatched = CliRun.of("policy", "explain", file.toString(), "--url", "http://evilapi.example.com/");
        assertThat(unmatched.out()).contains("decision: deny", "reason: no_matching_rule");
    }

    @Test
    void explainRefusesUserinfoUrlAsUsageError() throws IOException {
        Path file = write("p.yaml", """
                rules:
                  - name: api
                    hosts: [api.example.com]
                """);
        CliRun run = CliRun.of("policy", "explain", file.toString(), "--url", "https://api.example.com@evil.example.net/");
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).startsWith("sallyport: --url: ").contains("userinfo").hasLineCount(1);
    }

    @Test
    void usageErrorsExit2WithOneLine() {
        CliRun none = CliRun.of();
        assertThat(none.exit()).isEqualTo(2);
        assertThat(none.err()).contains("a subcommand is required");

        CliRun unknown = CliRun.of("policy", "check", "--frobnicate", "x");
        assertThat(unknown.exit()).isEqualTo(2);
        assertThat(unknown.err()).contains("--frobnicate").hasLineCount(1);
    }
}
