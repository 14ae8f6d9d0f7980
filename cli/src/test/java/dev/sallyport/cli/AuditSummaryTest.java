package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.ca.CaExport;
import dev.sallyport.ca.CertificateAuthority;
import dev.sallyport.policy.HostPort;
import dev.sallyport.policy.PolicyLoader;
import dev.sallyport.proxy.ProxyOptions;
import dev.sallyport.proxy.SallyportProxy;
import dev.sallyport.proxy.inject.Placeholders;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.TestPki;
import dev.sallyport.testing.TlsTestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuditSummaryTest {

    @TempDir
    Path dir;

    @Test
    void summarizesHostsDenialsSecretsAndRules() throws Exception {
        Path log = dir.resolve("audit.jsonl");
        Files.writeString(log, """
                {"ts":"2026-11-30T00:00:00.000Z","event":"connect","host":"api.example.com","port":443,"decision":"allow","rule":"api","reason":"allowed_by_rule","tls":"intercepted"}
                {"ts":"2026-11-30T00:00:01.000Z","event":"request","host":"api.example.com","port":443,"method":"GET","path":"/x","status":200,"decision":"allow","rule":"api","secrets":["GITHUB_TOKEN"],"bytes_up":10,"bytes_down":20}
                {"ts":"2026-11-30T00:00:02.000Z","event":"request","host":"api.example.com","port":443,"method":"GET","path":"/y","status":200,"decision":"allow","rule":"api","secrets":["GITHUB_TOKEN"]}
                {"ts":"2026-11-30T00:00:03.000Z","event":"connect","host":"evil.example.net","port":443,"decision":"deny","reason":"no_matching_rule","status":403}
                {"ts":"2026-11-30T00:00:04.000Z","event":"request","host":"api.example.com","port":443,"method":"POST","path":"/z","decision":"deny","rule":"no-writes","reason":"denied_by_rule","status":403,"future_field":{"a":[1,2]}}
                {"ts":"2026-11-30T00:00:05.000Z","event":"reload","result":"success"}
                """);
        CliRun run = CliRun.of("audit", "summary", log.toString());
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out())
                .contains("6 records, 3 exchanges, 1 tunnel, 2026-11-30T00:00:00.000Z .. 2026-11-30T00:00:05.000Z")
                .contains("     2  api.example.com:443")
                .contains("     1  evil.example.net:443  (no_matching_rule)")
                .contains("     1  api.example.com:443  (denied_by_rule)")
                .containsPattern("GITHUB_TOKEN +api.example.com:443 2")
                .containsPattern("api +allow 3")
                .containsPattern("no-writes +deny 1")
                .contains("policy reloads: 1");
    }

    @Test
    void listsThePackageVersionsRegistriesRefused() throws Exception {
        Path log = dir.resolve("audit.jsonl");
        Files.writeString(log, """
                {"ts":"2026-11-30T00:00:00.000Z","event":"registry","id":"r1","host":"registry.example.com","port":443,"method":"GET","path":"/leftish","decision":"deny","rule":"registry:npm","reason":"release_too_new","ecosystem":"npm","package":"leftish","version":"1.2.0"}
                {"ts":"2026-11-30T00:00:00.100Z","event":"request","id":"r1","host":"registry.example.com","port":443,"method":"GET","path":"/leftish","status":200,"decision":"allow","rule":"registry:npm"}
                {"ts":"2026-11-30T00:00:01.000Z","event":"registry","id":"r2","host":"registry.example.com","port":443,"method":"GET","path":"/leftish/-/leftish-1.2.0.tgz","decision":"deny","rule":"registry:npm","reason":"release_too_new","ecosystem":"npm","package":"leftish","version":"1.2.0"}
                {"ts":"2026-11-30T00:00:01.000Z","event":"request","id":"r2","host":"registry.example.com","port":443,"method":"GET","path":"/leftish/-/leftish-1.2.0.tgz","status":403,"decision":"deny","rule":"registry:npm","reason":"release_too_new"}
                {"ts":"2026-11-30T00:00:02.000Z","event":"registry","id":"r3","host":"pypi.example.com","port":443,"method":"GET","path":"/simple/bad-lib/","decision":"deny","rule":"registry:pypi","reason":"known_malicious","ecosystem":"pypi","package":"bad-lib","version":"2.1"}
                """);
        CliRun run = CliRun.of("audit", "summary", log.toString());
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out()).contains("package versions refused (registries; requests per reason):")
                .containsPattern("npm leftish@1.2.0 +release_too_new 2")
                .containsPattern("pypi bad-lib@2.1 +known_malicious 1")
                .contains("2 exchanges")
                .containsPattern("registry:npm +allow 1, deny 1");
    }

    @Test
    void listsTheGitPushesItsEntriesRefused() throws Exception {
        Path log = dir.resolve("audit.jsonl");
        Files.writeString(log, """
                {"ts":"2026-11-30T00:00:00.000Z","event":"request","id":"r1","host":"git.example.com","port":443,"method":"POST","path":"/acme/widgets.git/git-receive-pack","status":200,"decision":"allow","rule":"git:agent-branches","repository":"acme/widgets","refs":["refs/heads/agent/fix"],"refs_refused":[]}
                {"ts":"2026-11-30T00:00:01.000Z","event":"request","id":"r2","host":"git.example.com","port":443,"method":"POST","path":"/acme/widgets.git/git-receive-pack","status":200,"decision":"deny","rule":"git:agent-branches","reason":"git_ref_not_allowed","repository":"acme/widgets","refs":["refs/heads/main","refs/heads/agent/x"],"refs_refused":["refs/heads/main"]}
                {"ts":"2026-11-30T00:00:02.000Z","event":"request","id":"r3","host":"git.example.com","port":443,"method":"POST","path":"/acme/widgets.git/git-receive-pack","status":200,"decision":"deny","rule":"git:agent-branches","reason":"git_ref_not_allowed","repository":"acme/widgets","refs":["refs/heads/main"],"refs_refused":["refs/heads/main"]}
                {"ts":"2026-11-30T00:00:03.000Z","event":"request","id":"r4","host":"git.example.com","port":443,"method":"GET","path":"/acme/other.git/info/refs","status":403,"decision":"deny","rule":"git:everything-else","reason":"git_push_denied","repository":"acme/other"}
                """);
        CliRun run = CliRun.of("audit", "summary", log.toString());
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out()).contains("git pushes refused (per repository, refused refs and the first reason):")
                .containsPattern("git.example.com/acme/widgets +refs/heads/main \\(git_ref_not_allowed\\) 2")
                .containsPattern("git.example.com/acme/other +\\(discovery\\) \\(git_push_denied\\) 1")
                .doesNotContain("agent/fix (");
    }

    @Test
    void aDeniedLookupIsADenialAndAnAnsweredOneCountsNowhere() throws Exception {
        Path log = dir.resolve("audit.jsonl");
        Files.writeString(log, """
                {"ts":"2026-11-30T00:00:00.000Z","event":"dns","client":"127.0.0.1:5000","host":"api.example.com","qtype":"A","answer":"198.18.0.1","decision":"allow","rule":"api","reason":"allowed_by_rule"}
                {"ts":"2026-11-30T00:00:01.000Z","event":"dns","client":"127.0.0.1:5000","host":"exfil.evil.example.net","qtype":"TXT","answer":"NXDOMAIN","decision":"deny","reason":"no_matching_rule","suppressed":3}
                """);
        CliRun run = CliRun.of("audit", "summary", log.toString());
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out()).contains("exfil.evil.example.net").contains("(no_matching_rule)")
                .doesNotContainPattern("api +allow");
    }

    @Test
    void namesEachBadLineAndExits2() throws Exception {
        Path log = dir.resolve("audit.jsonl");
        Files.writeString(log, """
                {"ts":"2026-11-30T00:00:00.000Z","event":"request","host":"a.example.com","port":443,"status":200,"decision":"allow","rule":"r"}
                not json
                {"ts":"2026-11-30T00:00:01.000Z","event":"request"} trailing
                """);
        CliRun run = CliRun.of("audit", "summary", log.toString());
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains(log + ":2: ").contains(log + ":3: ").hasLineCount(2);
        assertThat(run.out()).contains("     1  a.example.com:443");
    }

    /**
     * Regression (issue 14 item 6): two requests showed as five "allowed exchanges" and four secret uses, because
     * the summary counted lines, and the proxy writes up to two {@code request} lines per exchange (the decision it
     * admits, then the outcome) besides the tunnel's {@code connect} and {@code tunnel_end}. Here the log is a real
     * proxy's, for a known set of requests: two tunnels with two requests each carrying the secret, one of them
     * denied by path, and a CONNECT no rule allows.
     */
    @Test
    void countsTheExchangesAndSecretUsesOfARealProxysLog() throws Exception {
        TestPki pki = TestPki.create();
        TestPki.Issued leaf = pki.issue("127.0.0.1");
        Path log = dir.resolve("audit.jsonl");
        Path tokenFile = Files.writeString(dir.resolve("token"), "tok-audit-summary-0123456789\n");
        String port;
        try (TlsTestServer upstream = TlsTestServer.start(leaf.key(), leaf.chain(), "hi")) {
            port = ":" + upstream.port();
            String yaml = CliProcess.loopbackUpstreamPolicy(pki.rootPem(dir), upstream.port(), "local-api", """
                        paths: ["/ok/**"]
                    audit: {path: %s}
                    secrets:
                      - name: API_TOKEN
                        from: file:%s
                        hosts: [127.0.0.1]
                        headers: [Authorization]
                    """.formatted(log, tokenFile));
            Path caPem = dir.resolve("ca.pem");
            CertificateAuthority ca = CertificateAuthority.ephemeral("Audit Summary Test CA");
            Files.write(caPem, CaExport.pem(ca, false));
            try (SallyportProxy proxy = SallyportProxy.start(ProxyOptions.of(PolicyLoader.parse(yaml, "p.yaml"))
                    .withCa(ca).withListen(new HostPort("127.0.0.1", 0)).withAdmin(new HostPort("127.0.0.1", 0))
                    .withPlaceholders(Placeholders.ephemeral()))) {
                String placeholder = proxy.secrets().placeholders().get("API_TOKEN");
                String base = "https://127.0.0.1:" + upstream.port();
                for (List<String> paths : List.of(List.of("/ok/1", "/ok/2"), List.of("/ok/3", "/denied"))) {
                    List<String> curl = new ArrayList<>(List.of("curl", "-sS", "--max-time", "20", "-x",
                            "127.0.0.1:" + proxy.address().getPort(), "--cacert", caPem.toString(), "--noproxy", "",
                            "-H", "Authorization: Bearer " + placeholder));
                    paths.forEach(p -> curl.add(base + p));
                    ExternalProcess.Result r = ExternalProcess.run(Duration.ofSeconds(30), curl, null);
                    assertThat(r.exit()).as(r.stderr()).isZero();
                }
                ExternalProcess.Result refused = ExternalProcess.run(Duration.ofSeconds(30), List.of("curl", "-sS",
                        "--max-time", "20", "-x", "127.0.0.1:" + proxy.address().getPort(), "--noproxy", "",
                        "https://127.0.0.1:1/"), null);
                assertThat(refused.exit()).isNotZero();
                proxy.flushAudit();
            }
        }
        List<String> lines = Files.readAllLines(log);
        assertThat(lines.size()).as("more lines than exchanges: what used to be counted").isGreaterThan(8);
        CliRun run = CliRun.of("audit", "summary", log.toString());
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out())
                .contains(lines.stream().filter(l -> !l.contains("\"event\":\"checkpoint\"")).count()
                        + " records, 4 exchanges, 2 tunnels")
                .containsPattern("hosts reached \\(allowed exchanges\\):\n +3  127\\.0\\.0\\.1" + port + "\n")
                .containsPattern(" +1  127\\.0\\.0\\.1" + port + "  \\(path_not_allowed\\)")
                .containsPattern(" +1  127\\.0\\.0\\.1:1  \\(")
                .containsPattern("API_TOKEN +127\\.0\\.0\\.1" + port + " 3\n")
                .containsPattern("local-api +allow 5\n")
                .containsPattern("\\(none\\) +deny 2\n");
    }

    @Test
    void missingFileIsARuntimeFailure() {
        CliRun run = CliRun.of("audit", "summary", dir.resolve("none.jsonl").toString());
        assertThat(run.exit()).isEqualTo(1);
        assertThat(run.err()).contains("no such file").hasLineCount(1);
    }
}
